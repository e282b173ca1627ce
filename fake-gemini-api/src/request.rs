//! The request side of the wire: `GenerateContentRequest` as agents send it.
//!
//! Lenient on purpose (agents send many fields the fake does not read): unknown fields are
//! ignored, and both the REST camelCase and the proto snake_case field names are accepted.

use serde::Deserialize;
use serde_json::Value;

/// A `generateContent` / `streamGenerateContent` / `countTokens` request body.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateContentRequest {
    /// The conversation so far.
    #[serde(default)]
    pub contents: Vec<Content>,
    /// The system prompt.
    #[serde(default, alias = "system_instruction")]
    pub system_instruction: Option<Content>,
    /// The tools the agent declares.
    #[serde(default)]
    pub tools: Vec<Tool>,
    /// Sampling and output settings, kept as sent.
    #[serde(default, alias = "generation_config")]
    pub generation_config: Value,
    /// `countTokens`' other shape: a whole request wrapped.
    #[serde(default, alias = "generate_content_request")]
    pub generate_content_request: Option<Box<GenerateContentRequest>>,
}

/// One turn of the conversation.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Content {
    /// `user` or `model` (may be absent).
    #[serde(default)]
    pub role: String,
    /// Its parts.
    #[serde(default)]
    pub parts: Vec<Part>,
}

/// One part of a content; the fake reads the kinds it needs and keeps the rest as sent.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// A text (or a thought, with `thought: true`).
    #[serde(default)]
    pub text: Option<String>,
    /// Marks the text as the model's thought.
    #[serde(default)]
    pub thought: Option<bool>,
    /// A call the model made.
    #[serde(default, alias = "function_call")]
    pub function_call: Option<FunctionCall>,
    /// A tool result the agent sends back.
    #[serde(default, alias = "function_response")]
    pub function_response: Option<FunctionResponse>,
    /// Inline bytes (images, files).
    #[serde(default, alias = "inline_data")]
    pub inline_data: Option<Value>,
}

/// A `functionCall` part's body.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct FunctionCall {
    /// The called function.
    #[serde(default)]
    pub name: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Value,
}

/// A `functionResponse` part's body.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct FunctionResponse {
    /// The function it answers.
    #[serde(default)]
    pub name: String,
    /// The result object.
    #[serde(default)]
    pub response: Value,
}

/// One entry of `tools`; only function declarations matter here.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The declared functions.
    #[serde(default, alias = "function_declarations")]
    pub function_declarations: Vec<FunctionDeclaration>,
}

/// A declared function.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionDeclaration {
    /// The name the model must call it by.
    #[serde(default)]
    pub name: String,
    /// Its description.
    #[serde(default)]
    pub description: String,
    /// Its parameters (OpenAPI subset).
    #[serde(default)]
    pub parameters: Option<Value>,
    /// Its parameters (JSON Schema).
    #[serde(default, alias = "parameters_json_schema")]
    pub parameters_json_schema: Option<Value>,
}

impl Content {
    /// Whether any part is a `functionCall`.
    pub fn has_function_call(&self) -> bool {
        self.parts.iter().any(|part| part.function_call.is_some())
    }

    /// Whether any part is a `functionResponse`.
    pub fn has_function_response(&self) -> bool {
        self.parts
            .iter()
            .any(|part| part.function_response.is_some())
    }

    /// The text parts (not thoughts) joined with `\n`, if any.
    pub fn joined_text(&self) -> Option<String> {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter(|part| part.thought != Some(true))
            .filter_map(|part| part.text.as_deref())
            .collect();
        (!texts.is_empty()).then(|| texts.join("\n"))
    }
}

impl GenerateContentRequest {
    /// Every declared function name, in order, without repeats.
    pub fn declared_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for declaration in self.declarations() {
            if !names.contains(&declaration.name.as_str()) {
                names.push(&declaration.name);
            }
        }
        names
    }

    /// Every function declaration across `tools`.
    pub fn declarations(&self) -> impl Iterator<Item = &FunctionDeclaration> {
        self.tools
            .iter()
            .flat_map(|tool| tool.function_declarations.iter())
    }

    /// Whether `generationConfig` asks for JSON output (a side request, not a turn).
    pub fn asks_for_json(&self) -> bool {
        let config = &self.generation_config;
        let field = |camel: &str, snake: &str| config.get(camel).or_else(|| config.get(snake));
        field("responseMimeType", "response_mime_type").and_then(Value::as_str)
            == Some("application/json")
            || field("responseSchema", "response_schema").is_some()
            || field("responseJsonSchema", "response_json_schema").is_some()
    }

    /// The output schema of a side request: `responseJsonSchema` or `responseSchema`.
    pub fn response_schema(&self) -> Option<&Value> {
        let config = &self.generation_config;
        [
            "responseJsonSchema",
            "response_json_schema",
            "responseSchema",
            "response_schema",
        ]
        .iter()
        .find_map(|key| config.get(*key))
    }

    /// The number of characters of text in the request's contents (and a wrapped request's).
    pub fn text_chars(&self) -> usize {
        let own: usize = self
            .contents
            .iter()
            .flat_map(|content| content.parts.iter())
            .filter_map(|part| part.text.as_deref())
            .map(|text| text.chars().count())
            .sum();
        own + self
            .generate_content_request
            .as_ref()
            .map_or(0, |inner| inner.text_chars())
    }
}
