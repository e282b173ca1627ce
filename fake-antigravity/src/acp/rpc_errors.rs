//! The JSON-RPC errors the real server answers with, in their recorded shapes
//! (docs/antigravity-1.3.0.md §5, §6, §12, §14): -32000 auth required and onboarding
//! failed, -32002 session not found, -32601 method not found with `data.method`, -32602
//! invalid params with pydantic-style `data.errors[].loc`.

use std::path::Path;

use agent_client_protocol::{Error, ErrorCode};
use serde_json::{Value, json};

/// One pydantic-style validation problem: where (`loc`), what (`msg`) and its kind.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamProblem {
    /// The path to the offending field, e.g. `["mcpServers", 0, "url"]`.
    pub loc: Vec<Value>,
    /// The human text, e.g. `field required`.
    pub msg: String,
    /// The pydantic error type, e.g. `value_error.missing`.
    pub kind: String,
}

impl ParamProblem {
    /// A required field is missing.
    pub fn missing(loc: Vec<Value>) -> Self {
        Self {
            loc,
            msg: "field required".into(),
            kind: "value_error.missing".into(),
        }
    }

    /// A field has the wrong JSON type.
    pub fn wrong_type(loc: Vec<Value>, expected: &str) -> Self {
        let (msg, kind) = match expected {
            "str" => ("str type expected".to_string(), "type_error.str"),
            "list" => ("value is not a valid list".to_string(), "type_error.list"),
            "dict" => ("value is not a valid dict".to_string(), "type_error.dict"),
            other => (format!("{other} expected"), "type_error"),
        };
        Self {
            loc,
            msg,
            kind: kind.into(),
        }
    }

    /// A field has a value outside what is accepted.
    pub fn bad_value(loc: Vec<Value>, msg: impl Into<String>) -> Self {
        Self {
            loc,
            msg: msg.into(),
            kind: "value_error".into(),
        }
    }
}

/// -32602 `Invalid params` with `data.errors`.
pub fn invalid_params(problems: &[ParamProblem]) -> Error {
    let errors: Vec<Value> = problems
        .iter()
        .map(|p| json!({"loc": p.loc, "msg": p.msg, "type": p.kind}))
        .collect();
    Error::new(ErrorCode::INVALID_PARAMS, "Invalid params").data(json!({ "errors": errors }))
}

/// -32602 with a plain message and no data (the GEMINI_API_KEY case).
pub fn invalid_params_message(message: &str) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message)
}

/// -32601 `Method not found` with `data.method`.
pub fn method_not_found(method: &str) -> Error {
    Error::new(ErrorCode::METHOD_NOT_FOUND, "Method not found").data(json!({ "method": method }))
}

/// -32000 `Authentication required`, naming the settings file under `gemini_home`.
pub fn auth_required(gemini_home: &Path) -> Error {
    let settings = gemini_home.join("antigravity-acp").join("settings.json");
    let message = format!(
        "No authentication method selected. Either call the `authenticate` method (supports \
         oauth-personal, gemini-api-key, agent-platform), or set `auth.type` in settings.json \
         ({}) to one of: oauth-personal, gemini-api-key (requires GEMINI_API_KEY env var), \
         oauth-business (Gemini Enterprise; requires gcp.project/location), agent-platform \
         (formerly 'vertex-ai', still accepted; requires GOOGLE_API_KEY, or a project and \
         location from GOOGLE_CLOUD_PROJECT/GOOGLE_CLOUD_LOCATION or gcp.project/gcp.location \
         with Application Default Credentials).",
        settings.display()
    );
    Error::new(ErrorCode::AUTH_REQUIRED, "Authentication required")
        .data(json!({ "message": message }))
}

/// -32000 `Onboarding failed: …` with `data.reason = "onboarding_failed"`.
pub fn onboarding_failed() -> Error {
    Error::new(
        ErrorCode::AUTH_REQUIRED,
        "Onboarding failed: The authentication flow did not complete successfully.",
    )
    .data(json!({ "reason": "onboarding_failed" }))
}

/// -32002 `Session not found in the current GEMINI_HOME`.
pub fn session_not_found(session_id: &str, gemini_home: &Path) -> Error {
    Error::new(
        ErrorCode::RESOURCE_NOT_FOUND,
        "Session not found in the current GEMINI_HOME",
    )
    .data(json!({ "sessionId": session_id, "geminiHome": gemini_home.display().to_string() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_params_has_the_recorded_shape() {
        let e = invalid_params(&[ParamProblem::missing(vec![json!("methodId")])]);
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(
            e.data,
            Some(
                json!({"errors":[{"loc":["methodId"],"msg":"field required","type":"value_error.missing"}]})
            )
        );
    }
}
