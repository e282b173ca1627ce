//! A late `session/request_permission` for a finished turn's host tool, asked while the
//! client closes that turn's session (`session_close.late_permission`) or opens its next
//! one (`session_new.late_permission`, for a server that does not offer `session/close`):
//! whether the client still answers it for the finished turn (its handlers attached) or
//! cancels it (detached, C33) shows on the wire.

use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Client, UntypedMessage};
use serde_json::json;

use crate::acp::session_updates::{mcp_tool_call, permission_options};
use crate::state::fake_agent::FakeAgent;

/// How long the fake waits for the answer to a late permission request.
const LATE_ANSWER_WAIT: Duration = Duration::from_secs(5);

/// Asks permission for `tool` of `session_id`'s MCP servers (found as a `call` step finds
/// it) and waits (bounded) for the answer; the wire tap journals both. A tool no server
/// has is journaled as an expectation failure instead.
pub async fn ask_late_permission(
    agent: &FakeAgent,
    cx: &ConnectionTo<Client>,
    session_id: &str,
    tool: &str,
) {
    let Some(servers) = agent
        .sessions
        .with(session_id, |session| session.mcp.clone())
    else {
        return;
    };
    // Found as a `call` step finds it (by title, then name), from the tools the turn
    // already listed.
    let resolved = match servers.resolve(tool).await {
        Ok(resolved) => resolved,
        Err(error) => {
            let message = format!("late_permission: {error}");
            agent.expectation_failed(0, 0, message);
            return;
        }
    };
    let id = uuid::Uuid::new_v4().simple().to_string();
    let tool_call = mcp_tool_call(&id, &resolved.server, &resolved.name, &json!({}));
    let params = json!({
        "sessionId": session_id,
        "toolCall": tool_call,
        "options": permission_options(),
    });
    let Ok(request) = UntypedMessage::new("session/request_permission", params) else {
        return;
    };
    let answer = cx.send_request(request).block_task();
    // The answer (or its absence) is on the wire; nothing here depends on it.
    let _answered = tokio::time::timeout(LATE_ANSWER_WAIT, answer).await;
}
