//! The `call` step: a host tool used the way 1.3.0 uses MCP tools (research §8–§10):
//! resolve the tool on the session's `http` MCP servers (lazy connect, `initialize`,
//! `tools/list`), announce a pending `tool_call`, ask `session/request_permission` (unless
//! the session is in `yolo` mode), then run the real `tools/call` and report `completed` or
//! `failed`. A denied or cancelled permission fails the tool call and ends the turn.

use agent_client_protocol::{Error, UntypedMessage};
use serde_json::{Value, json};

use crate::prompt_turn::TurnContext;
use crate::script::CallStep;
use crate::session_updates::{
    mcp_tool_call, permission_options, send_update, tool_call_finished, tool_call_running,
    tool_call_update_of,
};

/// What a call produced, for a later `expect_result`.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutcome {
    /// The MCP `CallToolResult`, as JSON.
    Result(Value),
    /// `tools/call` failed without a result (transport or JSON-RPC error, timeout).
    Errored(String),
    /// The call never reached `tools/call` (no server, unknown tool).
    NotRun(String),
}

/// How a call step ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CallEnd {
    /// The turn goes on.
    Ran(CallOutcome),
    /// The client denied (or cancelled) the permission: the turn ends with `end_turn`.
    Denied(String),
    /// `session/cancel` arrived: the turn ends with `cancelled`.
    Cancelled,
}

enum PermissionAnswer {
    Allowed,
    Rejected(String),
    Abandoned,
}

/// Runs one `call` step (`step` is its index in the turn).
pub async fn run_call(
    ctx: &TurnContext<'_>,
    step: usize,
    call: &CallStep,
) -> Result<CallEnd, Error> {
    let agent = ctx.agent;
    let session = agent
        .sessions
        .with(ctx.session_id, |s| (s.mcp.clone(), s.config.mode.clone()));
    let Some((pool, mode)) = session else {
        return Ok(CallEnd::Cancelled);
    };
    if pool.is_empty() {
        let message = format!(
            "call `{}`: the session was given no http MCP server at session/new",
            call.tool
        );
        agent.expectation_failed(ctx.turn, step, message.clone());
        return Ok(CallEnd::Ran(CallOutcome::NotRun(message)));
    }
    let resolved = tokio::select! {
        biased;
        () = ctx.cancelled.cancelled() => return Ok(CallEnd::Cancelled),
        resolved = pool.resolve(&call.tool) => resolved,
    };
    let tool = match resolved {
        Ok(tool) => tool,
        Err(e) => {
            let message = format!("call `{}`: {e}", call.tool);
            agent.expectation_failed(ctx.turn, step, message.clone());
            return Ok(CallEnd::Ran(CallOutcome::NotRun(message)));
        }
    };
    let tool_call_id = uuid::Uuid::new_v4().simple().to_string();
    let title = format!("{}_{}", tool.server, tool.name);
    let pending = mcp_tool_call(&tool_call_id, &tool.server, &tool.name, &call.args);
    send_update(ctx.cx, ctx.session_id, tool_call_update_of(&pending))?;

    if mode != "yolo" {
        match ask_permission(ctx, &pending).await? {
            PermissionAnswer::Allowed => {}
            PermissionAnswer::Abandoned => return Ok(CallEnd::Cancelled),
            PermissionAnswer::Rejected(answer) => {
                send_update(
                    ctx.cx,
                    ctx.session_id,
                    tool_call_finished(&tool_call_id, false, None),
                )?;
                agent.log.info(
                    "tool_runner.py:141",
                    &format!("permission for {title} answered {answer}; ending the turn"),
                );
                return Ok(CallEnd::Denied(answer));
            }
        }
    }

    send_update(
        ctx.cx,
        ctx.session_id,
        tool_call_running(&tool_call_id, &title),
    )?;
    let called = tokio::select! {
        biased;
        () = ctx.cancelled.cancelled() => {
            tool.connection.abandoned_call();
            return Ok(CallEnd::Cancelled);
        }
        called = tool.connection.call(&tool.name, &call.args) => called,
    };
    let display = format!("Call {}", tool.name);
    let outcome = match called {
        Ok(result) => CallOutcome::Result(result),
        Err(e) => CallOutcome::Errored(e.to_string()),
    };
    let completed = match &outcome {
        CallOutcome::Result(result) => !is_error(result),
        CallOutcome::Errored(_) | CallOutcome::NotRun(_) => false,
    };
    send_update(
        ctx.cx,
        ctx.session_id,
        tool_call_finished(&tool_call_id, completed, Some(&display)),
    )?;
    Ok(CallEnd::Ran(outcome))
}

/// A `CallToolResult`'s `isError` (absent counts as false).
pub fn is_error(result: &Value) -> bool {
    result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// A `CallToolResult`'s text content, concatenated.
pub fn result_text(result: &Value) -> String {
    result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

/// Sends `session/request_permission` and waits for the answer or for `session/cancel`.
///
/// The request is awaited by a task of its own, so a cancelled prompt simply stops
/// listening: the fake sends no `$/cancel_request` (the client answers `cancelled` itself).
async fn ask_permission(
    ctx: &TurnContext<'_>,
    tool_call: &Value,
) -> Result<PermissionAnswer, Error> {
    let params = json!({
        "sessionId": ctx.session_id,
        "toolCall": tool_call,
        "options": permission_options()
    });
    let sent = ctx
        .cx
        .send_request(UntypedMessage::new("session/request_permission", params)?);
    let (answer_tx, answer_rx) = tokio::sync::oneshot::channel();
    ctx.cx.spawn(async move {
        let _ = answer_tx.send(sent.block_task().await);
        Ok(())
    })?;
    let answer = tokio::select! {
        biased;
        () = ctx.cancelled.cancelled() => return Ok(PermissionAnswer::Abandoned),
        answer = answer_rx => answer,
    };
    if ctx.cancelled.is_cancelled() {
        return Ok(PermissionAnswer::Abandoned);
    }
    Ok(match answer {
        Ok(Ok(response)) => {
            let outcome = &response["outcome"];
            match (outcome["outcome"].as_str(), outcome["optionId"].as_str()) {
                (Some("selected"), Some("allow")) => PermissionAnswer::Allowed,
                (Some("selected"), Some(other)) => {
                    PermissionAnswer::Rejected(format!("selected `{other}`"))
                }
                (Some("cancelled"), _) => PermissionAnswer::Rejected("cancelled".into()),
                _ => PermissionAnswer::Rejected(format!("with an unreadable answer {response}")),
            }
        }
        Ok(Err(e)) => PermissionAnswer::Rejected(format!(
            "with JSON-RPC error {}: {}",
            e.code.value(),
            e.message
        )),
        Err(_) => PermissionAnswer::Rejected("nothing (the connection closed)".into()),
    })
}
