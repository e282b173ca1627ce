//! `session/update` notifications in the recorded 1.3.0 shapes (docs/antigravity-1.3.0.md
//! §8, §10, §13): text and thought chunks with no `messageId`, `usage_update`, MCP
//! `tool_call` and `tool_call_update`, sent as raw JSON through the SDK connection.

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Client, Error, UntypedMessage};
use serde_json::{Value, json};

/// Sends one `session/update` with `update` for `session_id`.
pub fn send_update(
    cx: &ConnectionTo<Client>,
    session_id: &str,
    update: Value,
) -> Result<(), Error> {
    let params = json!({"sessionId": session_id, "update": update});
    cx.send_notification(UntypedMessage::new("session/update", params)?)
}

/// An `agent_message_chunk` (one delta).
pub fn message_chunk(text: &str) -> Value {
    text_chunk("agent_message_chunk", text)
}

/// An `agent_thought_chunk` (one delta).
pub fn thought_chunk(text: &str) -> Value {
    text_chunk("agent_thought_chunk", text)
}

/// A `user_message_chunk` (history replay of `session/load`).
pub fn user_chunk(text: &str) -> Value {
    text_chunk("user_message_chunk", text)
}

fn text_chunk(kind: &str, text: &str) -> Value {
    json!({"content": {"text": text, "type": "text"}, "sessionUpdate": kind})
}

/// A `usage_update`.
pub fn usage_update(used: u64, size: u64) -> Value {
    json!({"sessionUpdate": "usage_update", "used": used, "size": size})
}

/// The pending MCP `tool_call` object (without `sessionUpdate`), as announced and as
/// carried in `session/request_permission`.
pub fn mcp_tool_call(tool_call_id: &str, server: &str, tool: &str, arguments: &Value) -> Value {
    json!({
        "toolCallId": tool_call_id,
        "title": format!("{server}_{tool}"),
        "kind": "other",
        "status": "pending",
        "content": [],
        "rawInput": {"arguments": arguments},
        "_meta": {"mcp": {"tool": tool, "server": server}, "is_mcp_tool_call": true}
    })
}

/// The `tool_call` a superseded host call's work runs under (quirk (b)): a new id,
/// `in_progress`, no `_meta`.
pub fn superseding_tool_call(tool_call_id: &str, title: &str, arguments: &Value) -> Value {
    json!({
        "sessionUpdate": "tool_call",
        "toolCallId": tool_call_id,
        "title": format!("Running {title}"),
        "kind": "other",
        "status": "in_progress",
        "rawInput": {"arguments": arguments}
    })
}

/// The rawOutput of a superseded approved call (docs/antigravity-1.3.0.md §8 quirk (b)).
pub const NEVER_EXECUTED: &str = "Tool call was approved but never executed.";

/// `tool_call_object` as a `tool_call` update.
pub fn tool_call_update_of(tool_call_object: &Value) -> Value {
    let mut update = tool_call_object.clone();
    if let Some(map) = update.as_object_mut() {
        map.insert("sessionUpdate".into(), json!("tool_call"));
    }
    update
}

/// The `in_progress` update once the call is allowed.
pub fn tool_call_running(tool_call_id: &str, title: &str) -> Value {
    json!({
        "sessionUpdate": "tool_call_update",
        "toolCallId": tool_call_id,
        "status": "in_progress",
        "title": format!("Running {title}")
    })
}

/// The final update: `completed` or `failed`, with the display-string `rawOutput`.
pub fn tool_call_finished(tool_call_id: &str, completed: bool, raw_output: Option<&str>) -> Value {
    let mut update = json!({
        "sessionUpdate": "tool_call_update",
        "toolCallId": tool_call_id,
        "status": if completed { "completed" } else { "failed" }
    });
    if let (Some(map), Some(raw_output)) = (update.as_object_mut(), raw_output) {
        map.insert("rawOutput".into(), json!(raw_output));
    }
    update
}

/// The options of every 1.3.0 permission request.
pub fn permission_options() -> Value {
    json!([
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "deny", "name": "Deny", "kind": "reject_once"}
    ])
}
