//! A model request in DSH's vocabulary (`GenerateOptions` of `@deepseek-ai/dsh-llm`):
//! provider and model, messages, optional system prompt and tools, the sampling controls
//! DSH may set, `sessionId`, `purpose`, and the abort signal. What DSH passes as live
//! objects (the `AbortSignal`, image bytes resolved from its attachment store) travels
//! beside the serialized fields.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::message::Message;

/// Why DSH is calling, when it is not an ordinary conversation request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Purpose {
    /// A summary that replaces older history.
    Compaction,
    /// A short title for the chat.
    SessionTitle,
}

/// A tool DSH offers (DSH's `ToolSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    /// DSH's own name for the tool.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON Schema of the arguments.
    pub parameters: Value,
}

/// The bytes of one image block, read from DSH's attachment store by the host glue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedImage {
    /// The media type the store verified.
    pub media_type: String,
    /// The bytes, base64-encoded (standard alphabet, padded).
    pub data_base64: String,
}

/// Everything one call to [`super::LlmAdapter::stream`] carries.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateOptions {
    /// The provider route DSH selected the adapter by.
    pub provider: String,
    /// The model id (`server-default`, or one of the server's models).
    pub model: String,
    /// An adapter-owned reasoning effort (the server accepts none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// The conversation, oldest first, as the provider sees it.
    pub messages: Vec<Message>,
    /// DSH's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The tools DSH offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolSchema>>,
    /// Sampling temperature (the server accepts none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Output cap. The server accepts none, so the adapter enforces it itself on the
    /// characters it streams (see the README: 4 characters per token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Stop sequences (the server accepts none; an empty list asks for nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<String>>,
    /// DSH's session identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// An auxiliary call's purpose; `None` for the conversation itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<Purpose>,
    /// DSH's abort signal: cancelling it ends the generation (and a pending exchange).
    #[serde(skip)]
    pub signal: CancellationToken,
    /// The bytes of the request's image blocks, by attachment id (resolved by the host).
    #[serde(skip)]
    pub images: HashMap<String, ResolvedImage>,
}

impl GenerateOptions {
    /// A conversation request with no tools and a fresh abort signal.
    pub fn new(
        provider: impl Into<String>,
        model: impl Into<String>,
        messages: Vec<Message>,
    ) -> Self {
        Self {
            provider: provider.into(),
            model: model.into(),
            messages,
            ..Self::default()
        }
    }

    /// The tools offered (none when absent).
    pub fn tools(&self) -> &[ToolSchema] {
        self.tools.as_deref().unwrap_or_default()
    }

    /// The system prompt (empty when absent).
    pub fn system(&self) -> &str {
        self.system.as_deref().unwrap_or_default()
    }

    /// The controls set that the server cannot honour and the adapter cannot enforce, by
    /// DSH's option names, in a fixed order. `maxTokens` is not among them (the adapter
    /// caps the output itself); an empty `stop` list asks for nothing.
    pub fn unsupported_controls(&self) -> Vec<&'static str> {
        let mut set = Vec::new();
        if self.reasoning_effort.is_some() {
            set.push("reasoningEffort");
        }
        if self.temperature.is_some() {
            set.push("temperature");
        }
        if self.stop.as_ref().is_some_and(|stop| !stop.is_empty()) {
            set.push("stop");
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A request reads from DSH's own field names, and the unsupported controls are named
    /// as DSH names them; an empty stop list is no request.
    #[test]
    fn requests_read_dsh_field_names() -> crate::TestResult {
        let options: GenerateOptions = serde_json::from_value(json!({
            "provider": "antigravity-acp", "model": "server-default",
            "messages": [{"id": "m1", "role": "user", "content": [{"type": "text", "text": "hi"}],
                          "source": {"kind": "user"}}],
            "tools": [{"name": "read", "description": "Reads", "parameters": {"type": "object"}}],
            "reasoningEffort": "high", "temperature": 0.2, "maxTokens": 9, "stop": [],
            "sessionId": "s1", "purpose": "session-title"
        }))?;
        assert_eq!(options.tools().len(), 1);
        assert_eq!(options.purpose, Some(Purpose::SessionTitle));
        assert_eq!(options.session_id.as_deref(), Some("s1"));
        assert_eq!(
            options.unsupported_controls(),
            ["reasoningEffort", "temperature"]
        );
        assert_eq!(options.max_tokens, Some(9));
        let stop = GenerateOptions {
            stop: Some(vec!["END".into()]),
            ..GenerateOptions::default()
        };
        assert_eq!(stop.unsupported_controls(), ["stop"]);
        Ok(())
    }
}
