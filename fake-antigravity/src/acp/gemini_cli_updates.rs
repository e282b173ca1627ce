//! Gemini CLI 0.61's shapes of a call to an MCP tool, as observed through the adapter
//! (`permission_meta: gemini_cli`): no `_meta`, the title `<tool> (<server> MCP Server)`
//! on every update, the tool call id
//! `mcp_<server>_<tool>__mcp_<server>_<tool>_<unix millis>_0`, and its four permission
//! options. The fake shares no code with the adapter, which recognises these shapes by its
//! own rules.

use serde_json::{Value, json};

/// The title Gemini CLI gives a call of `tool` on MCP server `server`.
pub fn title(server: &str, tool: &str) -> String {
    format!("{tool} ({server} MCP Server)")
}

/// A fresh tool call id for `tool` on `server`, stamped with the current time.
pub fn tool_call_id(server: &str, tool: &str) -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis())
        .unwrap_or_default();
    format!("mcp_{server}_{tool}__mcp_{server}_{tool}_{millis}_0")
}

/// The pending tool call object (without `sessionUpdate`), as announced and as carried
/// in `session/request_permission`.
pub fn pending_tool_call(tool_call_id: &str, title: &str, arguments: &Value) -> Value {
    json!({
        "toolCallId": tool_call_id,
        "title": title,
        "kind": "other",
        "status": "pending",
        "content": [],
        "rawInput": arguments
    })
}

/// A `tool_call_update` of the call with `status`, carrying its title as Gemini CLI's do.
pub fn status_update(tool_call_id: &str, title: &str, status: &str) -> Value {
    json!({
        "sessionUpdate": "tool_call_update",
        "toolCallId": tool_call_id,
        "status": status,
        "title": title
    })
}

/// Gemini CLI's permission options for an MCP tool.
pub fn permission_options(server: &str, tool: &str) -> Value {
    json!([
        {"optionId": "proceed_always_server", "name": format!("Always allow all tools from server \"{server}\""), "kind": "allow_always"},
        {"optionId": "proceed_always_tool", "name": format!("Always allow tool \"{tool}\""), "kind": "allow_always"},
        {"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
        {"optionId": "cancel", "name": "Reject", "kind": "reject_once"}
    ])
}

/// Whether `option` is one of Gemini CLI's allow options.
pub fn allows(option: &str) -> bool {
    matches!(
        option,
        "proceed_once" | "proceed_always_tool" | "proceed_always_server"
    )
}
