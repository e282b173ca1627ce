//! Checking an `expect_result` step against the `functionResponse`s the agent sent back.

use serde_json::Value;

use crate::request::FunctionResponse;
use crate::script::ExpectResult;

/// Checks that every response satisfies `expect`; the error says which did not and why.
pub fn check_results(expect: &ExpectResult, responses: &[&FunctionResponse]) -> Result<(), String> {
    if responses.is_empty() {
        return Err("no functionResponse came back after the call".to_owned());
    }
    for response in responses {
        check_one(expect, response)?;
    }
    Ok(())
}

fn check_one(expect: &ExpectResult, response: &FunctionResponse) -> Result<(), String> {
    let body = &response.response;
    if let Some(wanted) = expect.is_error {
        let found = is_error(body);
        if found != wanted {
            return Err(format!(
                "functionResponse `{}` is_error is {found}, expected {wanted}: {}",
                response.name,
                short_json(body)
            ));
        }
    }
    if let Some(needle) = &expect.contains {
        let json_text = body.to_string();
        if !json_text.contains(needle.as_str()) && !any_string_contains(body, needle) {
            return Err(format!(
                "functionResponse `{}` does not contain {needle:?}: {}",
                response.name,
                short_json(body)
            ));
        }
    }
    Ok(())
}

/// An `error` key at the top, or `isError: true` anywhere.
fn is_error(body: &Value) -> bool {
    body.get("error").is_some() || has_is_error_true(body)
}

fn has_is_error_true(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(key, inner)| {
            (key == "isError" && inner == &Value::Bool(true)) || has_is_error_true(inner)
        }),
        Value::Array(items) => items.iter().any(has_is_error_true),
        _ => false,
    }
}

fn any_string_contains(value: &Value, needle: &str) -> bool {
    match value {
        // An agent may carry the tool's result as JSON text inside its own message
        // (Gemini CLI: `"MCP tool … with response: [{\"functionResponse\": …}]"`): the
        // text is also searched with its quotes unescaped, up to three levels deep.
        Value::String(text) => {
            let mut text = std::borrow::Cow::Borrowed(text.as_str());
            for _ in 0..4 {
                if text.contains(needle) {
                    return true;
                }
                let unescaped = text.replace("\\\"", "\"").replace("\\\\", "\\");
                if unescaped == text {
                    return false;
                }
                text = std::borrow::Cow::Owned(unescaped);
            }
            false
        }
        Value::Object(map) => map.values().any(|inner| any_string_contains(inner, needle)),
        Value::Array(items) => items.iter().any(|inner| any_string_contains(inner, needle)),
        _ => false,
    }
}

fn short_json(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 200 {
        return text;
    }
    let mut short: String = text.chars().take(200).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn response(body: Value) -> FunctionResponse {
        FunctionResponse {
            name: "t".into(),
            response: body,
        }
    }

    #[test]
    fn is_error_sees_an_error_key_or_a_nested_is_error() {
        let want_error = ExpectResult {
            is_error: Some(true),
            contains: None,
        };
        let nested = response(json!({"output": {"isError": true, "content": []}}));
        let top = response(json!({"error": "boom"}));
        let fine = response(json!({"output": "ok", "isError": false}));
        assert!(check_results(&want_error, &[&nested]).is_ok());
        assert!(check_results(&want_error, &[&top]).is_ok());
        assert!(check_results(&want_error, &[&fine]).is_err());
        assert!(check_results(&want_error, &[&top, &fine]).is_err());
        assert!(check_results(&want_error, &[]).is_err());
        // An agent may pass the MCP result on as a list of parts.
        let in_a_list = response(json!({"output": [{"isError": true}]}));
        assert!(check_results(&want_error, &[&in_a_list]).is_ok());
    }

    #[test]
    fn contains_sees_a_result_nested_as_json_text() {
        let nested = response(serde_json::json!({
            "error": "MCP tool 't_0123456789ab' reported tool error: [{\"text\":\"Error: the user rejected tool \\\"delete_file\\\"\"}]"
        }));
        let expect = ExpectResult {
            is_error: None,
            contains: Some("the user rejected tool \"delete_file\"".into()),
        };
        assert!(check_one(&expect, &nested).is_ok());
        let other = ExpectResult {
            is_error: None,
            contains: Some("the user approved".into()),
        };
        assert!(check_one(&other, &nested).is_err());
    }

    #[test]
    fn contains_matches_the_json_text_or_a_string() {
        let expect = ExpectResult {
            is_error: None,
            contains: Some("say \"hi\"".into()),
        };
        assert!(check_results(&expect, &[&response(json!({"output": "say \"hi\""}))]).is_ok());
        assert!(check_results(&expect, &[&response(json!({"output": "say hi"}))]).is_err());
        let in_a_list = response(json!({"output": [{"text": "say \"hi\""}]}));
        assert!(check_results(&expect, &[&in_a_list]).is_ok());
    }

    #[test]
    fn a_failure_shows_the_response_and_cuts_a_long_one() {
        let expect = ExpectResult {
            is_error: None,
            contains: Some("absent".into()),
        };
        let short = check_results(&expect, &[&response(json!({"output": "brief"}))]).unwrap_err();
        assert!(short.contains(r#"{"output":"brief"}"#), "{short}");
        assert!(!short.contains('…'), "{short}");
        let long = "x".repeat(500);
        let cut = check_results(&expect, &[&response(json!({ "output": long }))]).unwrap_err();
        assert!(cut.contains('…'), "{cut}");
        assert!(!cut.contains(&"x".repeat(300)), "{cut}");
    }
}
