//! Turning a received request into its journal `request` entry, the API key by its
//! shape only.

use axum::http::HeaderMap;
use serde_json::Value;

use crate::journal::{
    ApiKeyShape, ApiMethod, JournalContent, JournalPart, JournalTool, PartKind, RequestEntry,
};
use crate::request::{Content, GenerateContentRequest, Part};

/// Where the request came in and what it held.
#[derive(Debug, Clone, Copy)]
pub struct Received<'a> {
    /// The request's sequence number.
    pub seq: u64,
    /// Which method.
    pub method: ApiMethod,
    /// The model in the path.
    pub model: &'a str,
    /// The path, without the query.
    pub path: &'a str,
    /// The query, if any (read only for the key's shape).
    pub query: Option<&'a str>,
    /// The headers (read only for the key's shape).
    pub headers: &'a HeaderMap,
}

/// The `request` entry of a request.
pub fn request_entry(received: Received<'_>, request: &GenerateContentRequest) -> RequestEntry {
    let shown = match &request.generate_content_request {
        Some(inner) if request.contents.is_empty() => inner.as_ref(),
        _ => request,
    };
    RequestEntry {
        seq: received.seq,
        method: received.method,
        model: received.model.to_owned(),
        path: received.path.to_owned(),
        api_key: api_key_shape(received.headers, received.query),
        contents: shown.contents.iter().map(journal_content).collect(),
        system_instruction: shown
            .system_instruction
            .as_ref()
            .and_then(Content::joined_text),
        tools: shown
            .declarations()
            .map(|declaration| JournalTool {
                name: declaration.name.clone(),
                description: declaration.description.clone(),
                parameters: declaration
                    .parameters
                    .clone()
                    .or_else(|| declaration.parameters_json_schema.clone())
                    .unwrap_or(Value::Null),
            })
            .collect(),
        generation_config: shown.generation_config.clone(),
    }
}

/// The key's shape: `x-goog-api-key`, else `authorization: Bearer`, else `?key=`.
pub fn api_key_shape(headers: &HeaderMap, query: Option<&str>) -> Option<ApiKeyShape> {
    let header_text = |name: &str| {
        headers
            .get(name)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
    };
    if let Some(key) = header_text("x-goog-api-key") {
        return Some(ApiKeyShape {
            header: Some("x-goog-api-key".to_owned()),
            query: None,
            chars: key.chars().count(),
        });
    }
    if let Some(value) = header_text("authorization") {
        let token = value.strip_prefix("Bearer ").unwrap_or(&value);
        return Some(ApiKeyShape {
            header: Some("authorization".to_owned()),
            query: None,
            chars: token.chars().count(),
        });
    }
    let key = query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("key="))?;
    Some(ApiKeyShape {
        header: None,
        query: Some("key".to_owned()),
        chars: key.chars().count(),
    })
}

fn journal_content(content: &Content) -> JournalContent {
    JournalContent {
        role: content.role.clone(),
        parts: content.parts.iter().map(journal_part).collect(),
    }
}

fn journal_part(part: &Part) -> JournalPart {
    let empty = JournalPart {
        kind: PartKind::Other,
        text: None,
        name: None,
        args: None,
        response: None,
    };
    if let Some(call) = &part.function_call {
        return JournalPart {
            kind: PartKind::FunctionCall,
            name: Some(call.name.clone()),
            args: Some(call.args.clone()),
            ..empty
        };
    }
    if let Some(response) = &part.function_response {
        return JournalPart {
            kind: PartKind::FunctionResponse,
            name: Some(response.name.clone()),
            response: Some(response.response.clone()),
            ..empty
        };
    }
    if let Some(text) = &part.text {
        let kind = if part.thought == Some(true) {
            PartKind::Thought
        } else {
            PartKind::Text
        };
        return JournalPart {
            kind,
            text: Some(text.clone()),
            ..empty
        };
    }
    if part.inline_data.is_some() {
        return JournalPart {
            kind: PartKind::InlineData,
            ..empty
        };
    }
    empty
}
