//! DSH's messages and content blocks (`Message`, `ContentBlock` of `@deepseek-ai/dsh-llm`),
//! with DSH's wire names. A tool result arrives in either of the two shapes DSH builds
//! have used: a `user` message holding one `tool-result` block (0.1.x,
//! `createToolResultMessage`), or a `role: 'tool'` message with `toolCallId` (0.2.x);
//! [`Message::tool_results`] reads both alike. Block types DSH plugins add (the map is
//! merge-extensible) survive as [`ContentBlock::Other`], so nothing is lost in transit.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// Visible text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextBlock {
    /// The text.
    pub text: String,
}

/// A durable image reference into DSH's attachment store (`ImageAttachmentRef` of
/// `@deepseek-ai/dsh-attachment`): no bytes, only identity and metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageAttachmentRef {
    /// Opaque storage identifier.
    pub attachment_id: String,
    /// Media type verified from the stored bytes.
    pub media_type: String,
    /// Exact encoded byte length.
    pub bytes: u64,
    /// Intrinsic width in pixels.
    pub width: u32,
    /// Intrinsic height in pixels.
    pub height: u32,
    /// Display name, when the user gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// An image block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageBlock {
    /// The attachment it refers to.
    pub attachment: ImageAttachmentRef,
}

/// A tool call the model made (DSH's `ToolCallBlock`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallBlock {
    /// The correlation id the adapter gave the call.
    pub id: String,
    /// DSH's original tool name.
    pub name: String,
    /// The validated arguments, as raw JSON text.
    pub arguments: String,
}

/// The result of a tool call (DSH's `ToolResultBlock`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultBlock {
    /// The call it answers.
    pub tool_call_id: String,
    /// What the tool returned.
    pub content: Vec<ContentBlock>,
    /// Whether the call failed or was denied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

/// The blocks DSH knows, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
enum KnownBlock {
    Text(TextBlock),
    Reasoning(TextBlock),
    Image(ImageBlock),
    ToolCall(ToolCallBlock),
    ToolResult(ToolResultBlock),
}

/// One content block (DSH's `ContentBlock`).
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// `{type: 'text', text}`.
    Text(TextBlock),
    /// `{type: 'reasoning', text}`.
    Reasoning(TextBlock),
    /// `{type: 'image', attachment}`.
    Image(ImageBlock),
    /// `{type: 'tool-call', id, name, arguments}`.
    ToolCall(ToolCallBlock),
    /// `{type: 'tool-result', toolCallId, content, isError?}`.
    ToolResult(ToolResultBlock),
    /// A block type a DSH plugin added, kept as it came.
    Other(Value),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextBlock { text: text.into() })
    }

    /// A reasoning block.
    pub fn reasoning(text: impl Into<String>) -> Self {
        Self::Reasoning(TextBlock { text: text.into() })
    }

    /// The block's `type` tag.
    pub fn type_name(&self) -> &str {
        match self {
            Self::Text(_) => "text",
            Self::Reasoning(_) => "reasoning",
            Self::Image(_) => "image",
            Self::ToolCall(_) => "tool-call",
            Self::ToolResult(_) => "tool-result",
            Self::Other(value) => value.get("type").and_then(Value::as_str).unwrap_or("?"),
        }
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let known = match self {
            Self::Text(b) => KnownBlock::Text(b.clone()),
            Self::Reasoning(b) => KnownBlock::Reasoning(b.clone()),
            Self::Image(b) => KnownBlock::Image(b.clone()),
            Self::ToolCall(b) => KnownBlock::ToolCall(b.clone()),
            Self::ToolResult(b) => KnownBlock::ToolResult(b.clone()),
            Self::Other(value) => return value.serialize(serializer),
        };
        known.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let known = matches!(
            value.get("type").and_then(Value::as_str),
            Some("text" | "reasoning" | "image" | "tool-call" | "tool-result")
        );
        if !known {
            return Ok(Self::Other(value));
        }
        let block = KnownBlock::deserialize(value).map_err(serde::de::Error::custom)?;
        Ok(match block {
            KnownBlock::Text(b) => Self::Text(b),
            KnownBlock::Reasoning(b) => Self::Reasoning(b),
            KnownBlock::Image(b) => Self::Image(b),
            KnownBlock::ToolCall(b) => Self::ToolCall(b),
            KnownBlock::ToolResult(b) => Self::ToolResult(b),
        })
    }
}

/// A message's role. `tool` is the 0.2.x shape of a tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions from DSH.
    System,
    /// The user (and, in 0.1.x, tool results).
    User,
    /// The model.
    Assistant,
    /// A tool result (0.2.x).
    Tool,
}

/// One message of the conversation (DSH's `Message`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// DSH's stable message id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Who said it.
    pub role: Role,
    /// The model-facing blocks.
    pub content: Vec<ContentBlock>,
    /// The call a `role: 'tool'` message answers (0.2.x).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Whether a `role: 'tool'` message reports a failure (0.2.x).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Where the message came from (DSH's merge-extensible `MessageSource`), as it came.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub source: Value,
}

/// One tool result, whichever shape carried it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolResultView<'a> {
    /// The call it answers.
    pub call_id: &'a str,
    /// What the tool returned.
    pub content: &'a [ContentBlock],
    /// Whether it failed or was denied.
    pub is_error: bool,
}

impl Message {
    /// A message of `role` with `content` and no id or source.
    pub fn new(role: Role, content: Vec<ContentBlock>) -> Self {
        Self {
            id: None,
            role,
            content,
            tool_call_id: None,
            is_error: None,
            source: Value::Null,
        }
    }

    /// A user message of one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, vec![ContentBlock::text(text)])
    }

    /// DSH's tool-result message (0.1.x shape): a user message with one `tool-result`
    /// block, sourced from the tool.
    pub fn tool_result(call_id: &str, content: Vec<ContentBlock>, is_error: bool) -> Self {
        let mut message = Self::new(
            Role::User,
            vec![ContentBlock::ToolResult(ToolResultBlock {
                tool_call_id: call_id.to_owned(),
                content,
                is_error: Some(is_error),
            })],
        );
        message.source = serde_json::json!({"kind": "tool", "callId": call_id});
        message
    }

    /// The tool results this message carries: its `tool-result` blocks, or (a
    /// `role: 'tool'` message) the message itself.
    pub fn tool_results(&self) -> Vec<ToolResultView<'_>> {
        if self.role == Role::Tool {
            return match &self.tool_call_id {
                Some(call_id) => vec![ToolResultView {
                    call_id,
                    content: &self.content,
                    is_error: self.is_error.unwrap_or(false),
                }],
                None => Vec::new(),
            };
        }
        self.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolResult(result) => Some(ToolResultView {
                    call_id: &result.tool_call_id,
                    content: &result.content,
                    is_error: result.is_error.unwrap_or(false),
                }),
                _ => None,
            })
            .collect()
    }

    /// Whether this is something the user (or DSH) said, not only tool results: a user or
    /// system message with any block that is not a tool result.
    pub fn is_prompt(&self) -> bool {
        matches!(self.role, Role::User | Role::System)
            && self
                .content
                .iter()
                .any(|block| !matches!(block, ContentBlock::ToolResult(_)))
    }

    /// The tool calls of an assistant message.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCallBlock> {
        self.content.iter().filter_map(|block| match block {
            ContentBlock::ToolCall(call) if self.role == Role::Assistant => Some(call),
            _ => None,
        })
    }
}

/// The text of blocks as the model reads it: text and reasoning joined, other blocks
/// named.
pub fn blocks_text(blocks: &[ContentBlock]) -> String {
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(b) | ContentBlock::Reasoning(b) => parts.push(b.text.clone()),
            other => parts.push(format!("({} block)", other.type_name())),
        }
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Both DSH shapes of a tool result read as the same result.
    #[test]
    fn both_tool_result_shapes_read_alike() -> crate::TestResult {
        let v01: Message = serde_json::from_value(json!({
            "id": "m1", "role": "user",
            "content": [{"type": "tool-result", "toolCallId": "c1",
                         "content": [{"type": "text", "text": "ok"}], "isError": true}],
            "source": {"kind": "tool", "callId": "c1"}
        }))?;
        let v02: Message = serde_json::from_value(json!({
            "id": "m1", "role": "tool", "toolCallId": "c1", "isError": true,
            "content": [{"type": "text", "text": "ok"}],
            "source": {"kind": "tool", "callId": "c1"}
        }))?;
        for message in [&v01, &v02] {
            let results = message.tool_results();
            assert_eq!(results.len(), 1);
            assert_eq!(results[0].call_id, "c1");
            assert!(results[0].is_error);
            assert_eq!(blocks_text(results[0].content), "ok");
            assert!(!message.is_prompt());
        }
        Ok(())
    }

    /// A message crosses serde unchanged, unknown block types and sources included.
    #[test]
    fn messages_round_trip_losslessly() -> crate::TestResult {
        let wire = json!({
            "id": "m2", "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "think"},
                {"type": "tool-call", "id": "c1", "name": "read", "arguments": "{\"a\":1}"},
                {"type": "plugin-thing", "payload": [1, 2]}
            ],
            "source": {"kind": "model", "provider": "antigravity-acp", "model": "server-default"}
        });
        let message: Message = serde_json::from_value(wire.clone())?;
        assert_eq!(message.tool_calls().count(), 1);
        assert_eq!(message.content[2].type_name(), "plugin-thing");
        assert_eq!(serde_json::to_value(&message)?, wire);
        Ok(())
    }

    /// Only an assistant message makes tool calls; only tool-result blocks (or a
    /// `role: 'tool'` message) are results; a message of only results is no prompt.
    #[test]
    fn calls_results_and_prompts_are_read_by_role() {
        let call = ContentBlock::ToolCall(ToolCallBlock {
            id: "c1".into(),
            name: "read".into(),
            arguments: "{}".into(),
        });
        assert_eq!(
            Message::new(Role::Assistant, vec![call.clone()])
                .tool_calls()
                .count(),
            1
        );
        assert_eq!(Message::new(Role::User, vec![call]).tool_calls().count(), 0);
        let result = Message::tool_result("c1", vec![ContentBlock::text("ok")], false);
        assert!(!result.is_prompt());
        let mut mixed = result.clone();
        mixed.content.push(ContentBlock::text("and a question"));
        assert!(mixed.is_prompt());
        assert!(Message::new(Role::System, vec![ContentBlock::text("rules")]).is_prompt());
        assert!(!Message::new(Role::Assistant, vec![ContentBlock::text("hi")]).is_prompt());
        let orphan = Message::new(Role::Tool, vec![ContentBlock::text("no id")]);
        assert!(orphan.tool_results().is_empty());
    }

    /// A known block type with a wrong shape is an error, not an unknown block.
    #[test]
    fn a_malformed_known_block_is_refused() {
        let bad = json!({"type": "tool-call", "id": "c1"});
        assert!(serde_json::from_value::<ContentBlock>(bad).is_err());
    }
}
