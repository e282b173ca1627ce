//! A generate request: model, system prompt, complete history, current tools, purpose,
//! sampling options and the caller's abort signal.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Why DSH is calling the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// A turn of the conversation.
    #[default]
    Chat,
    /// A short title for the chat.
    Title,
    /// A summary that replaces older history.
    Compaction,
}

/// Sampling controls DSH may set. The Antigravity server accepts none of them, so any
/// field that is set makes the request fail with `unsupported_option`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplingOptions {
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Top-k sampling.
    pub top_k: Option<u32>,
    /// Cap on generated tokens.
    pub max_output_tokens: Option<u32>,
    /// Stop sequences.
    pub stop_sequences: Option<Vec<String>>,
    /// Seed for reproducible sampling.
    pub seed: Option<u64>,
}

impl SamplingOptions {
    /// The names of the controls that are set, in a fixed order.
    pub fn set_controls(&self) -> Vec<&'static str> {
        let mut set = Vec::new();
        if self.temperature.is_some() {
            set.push("temperature");
        }
        if self.top_p.is_some() {
            set.push("top_p");
        }
        if self.top_k.is_some() {
            set.push("top_k");
        }
        if self.max_output_tokens.is_some() {
            set.push("max_output_tokens");
        }
        if self.stop_sequences.is_some() {
            set.push("stop_sequences");
        }
        if self.seed.is_some() {
            set.push("seed");
        }
        set
    }
}

/// A tool DSH offers for this request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// DSH's own name for the tool.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON Schema of the tool's arguments.
    pub input_schema: Value,
}

/// Binary content (an image, a PDF, ...), base64-encoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinaryPart {
    /// The IANA media type, e.g. `image/png`.
    pub media_type: String,
    /// The bytes, base64-encoded (standard alphabet, padded).
    pub data_base64: String,
}

/// A part of a user message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserPart {
    /// Plain text.
    Text(String),
    /// Binary content.
    Binary(BinaryPart),
}

/// A tool call the assistant made, as DSH stored it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallPart {
    /// The correlation id the adapter gave the call.
    pub call_id: String,
    /// DSH's original tool name.
    pub tool_name: String,
    /// The validated arguments.
    pub arguments: Value,
}

/// A part of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AssistantPart {
    /// Visible text.
    Text(String),
    /// Reasoning text.
    Reasoning(String),
    /// A tool call.
    ToolCall(ToolCallPart),
}

/// The durable result of a tool call, as DSH recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The call's correlation id.
    pub call_id: String,
    /// DSH's original tool name.
    pub tool_name: String,
    /// The tool's output: a string, or any JSON value.
    pub output: Value,
    /// Whether the call failed or was denied.
    pub is_error: bool,
}

/// One message of the conversation history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", content = "parts", rename_all = "snake_case")]
pub enum Message {
    /// What the user said.
    User(Vec<UserPart>),
    /// What the assistant said and did.
    Assistant(Vec<AssistantPart>),
    /// Results of the assistant's tool calls.
    Tool(Vec<ToolResult>),
}

/// Everything one call to [`crate::contract::LlmAdapter::generate`] carries.
#[derive(Debug, Clone)]
pub struct GenerateRequest {
    /// The full DSH model id, e.g. `antigravity-acp/server-default`.
    pub model: String,
    /// DSH's system prompt.
    pub system: String,
    /// The complete conversation history, oldest first.
    pub history: Vec<Message>,
    /// The tools DSH offers for this request.
    pub tools: Vec<ToolDefinition>,
    /// Why DSH is calling.
    pub purpose: Purpose,
    /// Sampling controls.
    pub sampling: SamplingOptions,
    /// DSH's abort signal: cancelling it ends the generation (and a pending tool exchange).
    pub abort: CancellationToken,
}

impl GenerateRequest {
    /// A chat request with no tools, default sampling and a fresh abort signal.
    pub fn chat(
        model: impl Into<String>,
        system: impl Into<String>,
        history: Vec<Message>,
    ) -> Self {
        Self {
            model: model.into(),
            system: system.into(),
            history,
            tools: Vec::new(),
            purpose: Purpose::Chat,
            sampling: SamplingOptions::default(),
            abort: CancellationToken::new(),
        }
    }
}
