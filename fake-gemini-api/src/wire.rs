//! The response side of the wire: `GenerateContentResponse` JSON, SSE framing, parts,
//! usage and the Gemini-style error body.

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

/// The counts of `usageMetadata`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// `promptTokenCount`.
    pub prompt_tokens: u64,
    /// `candidatesTokenCount`.
    pub candidates_tokens: u64,
}

/// How the last event of a response ends the candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ending {
    /// The `finishReason` (`STOP`, `MAX_TOKENS`, `SAFETY`).
    pub finish_reason: &'static str,
    /// The `usageMetadata`.
    pub usage: Usage,
}

/// The fake's token estimate: a quarter of the characters, at least 1.
pub fn estimate_tokens(chars: usize) -> u64 {
    u64::try_from(chars / 4).unwrap_or(u64::MAX).max(1)
}

/// `{"text": ...}`.
pub fn text_part(text: &str) -> Value {
    json!({ "text": text })
}

/// `{"text": ..., "thought": true}`.
pub fn thought_part(text: &str) -> Value {
    json!({ "text": text, "thought": true })
}

/// `{"functionCall": {"name": ..., "args": ...}}` (no `id`, no `thoughtSignature`).
pub fn function_call_part(name: &str, args: &Value) -> Value {
    json!({ "functionCall": { "name": name, "args": args } })
}

/// One `GenerateContentResponse`: one candidate holding `parts`; the ending, if any, adds
/// `finishReason` and `usageMetadata`.
pub fn generate_content_response(parts: Vec<Value>, model: &str, ending: Option<Ending>) -> Value {
    let mut candidate = json!({
        "content": { "role": "model", "parts": parts },
        "index": 0,
    });
    let mut response = json!({ "candidates": [], "modelVersion": model });
    if let Some(ending) = ending {
        candidate["finishReason"] = Value::from(ending.finish_reason);
        let usage = ending.usage;
        response["usageMetadata"] = json!({
            "promptTokenCount": usage.prompt_tokens,
            "candidatesTokenCount": usage.candidates_tokens,
            "totalTokenCount": usage.prompt_tokens.saturating_add(usage.candidates_tokens),
        });
    }
    response["candidates"] = Value::Array(vec![candidate]);
    response
}

/// One SSE event: `data: <json>\r\n\r\n`.
pub fn sse_event(response: &Value) -> Bytes {
    Bytes::from(format!("data: {response}\r\n\r\n"))
}

/// A JSON body with status 200.
pub fn json_response(value: &Value) -> Response {
    with_body(
        StatusCode::OK,
        "application/json",
        Body::from(value.to_string()),
    )
}

/// A streamed body with status 200 and the given content type.
pub fn streamed_response(content_type: &'static str, body: Body) -> Response {
    with_body(StatusCode::OK, content_type, body)
}

/// `{"error": {"code": ..., "message": ..., "status": ...}}`.
pub fn error_response(code: StatusCode, status: &str, message: &str) -> Response {
    let body = json!({
        "error": { "code": code.as_u16(), "message": message, "status": status }
    });
    with_body(code, "application/json", Body::from(body.to_string()))
}

fn with_body(code: StatusCode, content_type: &'static str, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = code;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    response
}
