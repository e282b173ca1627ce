//! `session/request_permission`, the fake's one agent→client request
//! (docs/antigravity-1.3.0.md §9): sent with a tool call and its options, then awaited
//! until the client answers or the prompt is cancelled. Every step that asks (`call`,
//! `parallel`, `native`, `question`, `foreign_call`) goes through here; each reads the
//! reply its own way.

use agent_client_protocol::Error;
use serde_json::{Value, json};

use crate::turn::context::{ClientAnswer, TurnContext};

/// The client's reply to one permission request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionReply {
    /// `{"outcome": {"outcome": "selected", "optionId": …}}`.
    Selected(String),
    /// `{"outcome": {"outcome": "cancelled"}}`.
    Cancelled,
    /// Anything else: an error response, an unreadable answer, a closed connection.
    Unusable(String),
    /// `session/cancel` arrived first: the fake stopped listening.
    Abandoned,
}

impl PermissionReply {
    /// How the request was answered, for logs and expectation messages
    /// (`selected `deny``, `cancelled`, …).
    pub fn describe(&self) -> String {
        match self {
            Self::Selected(option) => format!("selected `{option}`"),
            Self::Cancelled => "cancelled".into(),
            Self::Unusable(what) => what.clone(),
            Self::Abandoned => "nothing (the prompt was cancelled first)".into(),
        }
    }
}

/// Sends `session/request_permission` for `tool_call` with `options` and waits for the
/// answer or for `session/cancel` (then [`PermissionReply::Abandoned`]).
///
/// The request is awaited by a task of its own, so a cancelled prompt simply stops
/// listening: the fake sends no `$/cancel_request` (the client answers `cancelled` itself).
/// Several requests may be outstanding at once (`parallel`).
pub async fn request_permission(
    ctx: &TurnContext<'_>,
    tool_call: &Value,
    options: Value,
) -> Result<PermissionReply, Error> {
    let params = json!({
        "sessionId": ctx.session_id,
        "toolCall": tool_call,
        "options": options
    });
    let answer = match ctx.ask_client("session/request_permission", params).await? {
        ClientAnswer::Cancelled => return Ok(PermissionReply::Abandoned),
        ClientAnswer::Answered(answer) => Ok(answer),
        ClientAnswer::ConnectionClosed => Err(()),
    };
    if ctx.cancelled.is_cancelled() {
        return Ok(PermissionReply::Abandoned);
    }
    Ok(match answer {
        Ok(Ok(response)) => read_reply(&response),
        Ok(Err(e)) => PermissionReply::Unusable(format!(
            "with JSON-RPC error {}: {}",
            e.code.value(),
            e.message
        )),
        Err(_) => PermissionReply::Unusable("nothing (the connection closed)".into()),
    })
}

fn read_reply(response: &Value) -> PermissionReply {
    let outcome = &response["outcome"];
    match (outcome["outcome"].as_str(), outcome["optionId"].as_str()) {
        (Some("selected"), Some(option)) => PermissionReply::Selected(option.to_string()),
        (Some("cancelled"), _) => PermissionReply::Cancelled,
        _ => PermissionReply::Unusable(format!("with an unreadable answer {response}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_and_described() {
        let allow = json!({"outcome": {"outcome": "selected", "optionId": "allow"}});
        assert_eq!(
            read_reply(&allow),
            PermissionReply::Selected("allow".into())
        );
        let cancelled = json!({"outcome": {"outcome": "cancelled"}});
        assert_eq!(read_reply(&cancelled), PermissionReply::Cancelled);
        let odd = read_reply(&json!({"outcome": "yes"}));
        assert!(odd.describe().contains("unreadable"), "{odd:?}");
        assert_eq!(
            PermissionReply::Selected("deny".into()).describe(),
            "selected `deny`"
        );
    }
}
