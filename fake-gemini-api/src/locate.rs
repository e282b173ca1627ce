//! Where in a turn a request stands, read from the request alone (so retries replay).
//!
//! The prompt content is the last `user` content with a text part and no
//! `functionResponse`; the segment is the number of contents after it holding a
//! `functionCall`; the results to check are the `functionResponse` parts after the last
//! such content (whatever their role: Antigravity 1.3.0 sends them as `model`, Gemini
//! CLI as `user`). Also owns the short summary of a request used in error messages.

use crate::request::{FunctionResponse, GenerateContentRequest};

/// A request's place in its turn.
#[derive(Debug, Clone)]
pub struct Position<'r> {
    /// The prompt's text (its text parts joined with `\n`).
    pub prompt_text: String,
    /// The segment the request asks for.
    pub segment: usize,
    /// The `functionResponse`s from the last `functionCall` content on.
    pub responses: Vec<&'r FunctionResponse>,
}

/// Locates the request; `None` when it holds no prompt content.
pub fn locate(request: &GenerateContentRequest) -> Option<Position<'_>> {
    let (prompt_index, prompt_text) =
        request
            .contents
            .iter()
            .enumerate()
            .rev()
            .find_map(|(index, content)| {
                let is_prompt = content.role == "user" && !content.has_function_response();
                is_prompt
                    .then(|| content.joined_text())
                    .flatten()
                    .map(|text| (index, text))
            })?;
    let after_prompt = &request.contents[prompt_index + 1..];
    let segment = after_prompt
        .iter()
        .filter(|content| content.has_function_call())
        .count();
    let last_call = after_prompt
        .iter()
        .rposition(|content| content.has_function_call());
    let responses = match last_call {
        Some(index) => after_prompt[index..]
            .iter()
            .flat_map(|content| content.parts.iter())
            .filter_map(|part| part.function_response.as_ref())
            .collect(),
        None => Vec::new(),
    };
    Some(Position {
        prompt_text,
        segment,
        responses,
    })
}

/// A short summary of what a request held, for error messages.
pub fn summarize(request: &GenerateContentRequest) -> String {
    let position = locate(request);
    let prompt = position.as_ref().map_or_else(
        || "no prompt".to_owned(),
        |found| format!("prompt {:?}", shorten(&found.prompt_text, 60)),
    );
    let calls = position.as_ref().map_or(0, |found| found.segment);
    let responses = position.as_ref().map_or(0, |found| found.responses.len());
    let last_role = request
        .contents
        .last()
        .map_or("none", |content| content.role.as_str());
    format!(
        "request held {prompt}, {} contents (last role {last_role}), {calls} function-call \
         contents after the prompt, {responses} functionResponses after the last call, \
         {} functions declared",
        request.contents.len(),
        request.declared_names().len(),
    )
}

fn shorten(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(max_chars).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn request(value: serde_json::Value) -> GenerateContentRequest {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn the_prompt_is_the_last_user_text_without_a_function_response() {
        let held = request(json!({"contents": [
            {"role": "user", "parts": [{"text": "old"}]},
            {"role": "model", "parts": [{"text": "ok"}]},
            {"role": "user", "parts": [{"text": "new"}, {"text": "line"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {"x": 1}}},
                                       {"text": "extra"}]},
        ]}));
        let position = locate(&held).unwrap();
        assert_eq!(position.prompt_text, "new\nline");
        assert_eq!(position.segment, 1);
        assert_eq!(position.responses.len(), 1);
    }

    #[test]
    fn responses_in_a_model_content_count_too() {
        let held = request(json!({"contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "a"}}]},
            {"role": "model", "parts": [{"functionResponse": {"name": "a", "response": {}}}]},
        ]}));
        let position = locate(&held).unwrap();
        assert_eq!((position.segment, position.responses.len()), (1, 1));
    }
}
