//! The `call` step: a host tool used the way 1.3.0 uses MCP tools
//! (docs/antigravity-1.3.0.md §8–§10): resolve the tool on the session's `http` MCP servers
//! (lazy connect, `initialize`, `tools/list`), announce a pending `tool_call`, ask
//! `session/request_permission` (unless the session is in `yolo` mode), then run the real
//! `tools/call` and report `completed` or `failed`. A denied or cancelled permission fails
//! the tool call and ends the turn. With `permission_meta: gemini_cli` the call is shown
//! as Gemini CLI shows one ([`crate::acp::gemini_cli_updates`]). The three stages
//! ([`announce`], [`permit`], [`execute`]) are public so that `parallel` can run them for
//! several calls at once.

use agent_client_protocol::Error;
use serde_json::Value;

use crate::acp::gemini_cli_updates;
use crate::acp::session_updates::{
    NEVER_EXECUTED, mcp_tool_call, permission_options, send_update, superseding_tool_call,
    tool_call_finished, tool_call_running, tool_call_update_of,
};
use crate::mcp::client::ResolvedTool;
use crate::script::{CallStep, PermissionMeta};
use crate::turn::context::TurnContext;
use crate::turn::permission_request::{PermissionReply, request_permission};

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

/// A host tool call resolved and announced (`tool_call`, pending), not yet asked about.
#[derive(Debug, Clone)]
pub struct AnnouncedCall {
    /// The tool and its connection.
    pub tool: ResolvedTool,
    /// The ACP tool call id (32 hex).
    pub tool_call_id: String,
    /// `<server>_<tool>` (Gemini CLI's shape: `<tool> (<server> MCP Server)`).
    pub title: String,
    /// How the call is announced: 1.3.0's `_meta.mcp` shapes, or Gemini CLI's.
    pub permission_meta: PermissionMeta,
    /// The pending tool call object, as carried in the permission request.
    pub pending: Value,
    /// The `tools/call` arguments.
    pub args: Value,
    /// Whether permission must be asked (not in `yolo` mode).
    pub ask: bool,
}

/// What announcing a call came to.
#[derive(Debug, Clone)]
pub enum Announce {
    /// Announced; ask and run it next.
    Announced(Box<AnnouncedCall>),
    /// It cannot run (journaled as an expectation failure): no server or no such tool.
    NotRun(String),
    /// `session/cancel` arrived (or the session is gone).
    Cancelled,
}

/// What the permission answer for an announced call came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Permit {
    /// Selected `allow` (or not asked, in `yolo`): run it.
    Allowed,
    /// Anything else: the tool call was marked `failed`; how it was answered.
    Rejected(String),
    /// `session/cancel` arrived.
    Abandoned,
}

/// Runs one `call` step (`step` is its index in the turn).
pub async fn run_call(
    ctx: &TurnContext<'_>,
    step: usize,
    call: &CallStep,
) -> Result<CallEnd, Error> {
    let announced = match announce(ctx, step, call).await? {
        Announce::Announced(announced) => announced,
        Announce::NotRun(message) => return Ok(CallEnd::Ran(CallOutcome::NotRun(message))),
        Announce::Cancelled => return Ok(CallEnd::Cancelled),
    };
    match permit(ctx, &announced).await? {
        Permit::Allowed => {}
        Permit::Abandoned => return Ok(CallEnd::Cancelled),
        Permit::Rejected(answer) => return Ok(CallEnd::Denied(answer)),
    }
    Ok(match execute(ctx, &announced).await? {
        Some(outcome) => CallEnd::Ran(outcome),
        None => CallEnd::Cancelled,
    })
}

/// Resolves `call.tool` on the session's `http` MCP servers and announces the pending
/// `tool_call`. A missing server or tool is journaled as an expectation failure.
pub async fn announce(
    ctx: &TurnContext<'_>,
    step: usize,
    call: &CallStep,
) -> Result<Announce, Error> {
    let agent = ctx.agent;
    let session = agent
        .sessions
        .with(ctx.session_id, |s| (s.mcp.clone(), s.config.mode.clone()));
    let Some((pool, mode)) = session else {
        return Ok(Announce::Cancelled);
    };
    if pool.is_empty() {
        let message = format!(
            "call `{}`: the session was given no http MCP server at session/new",
            call.tool
        );
        agent.expectation_failed(ctx.turn, step, message.clone());
        return Ok(Announce::NotRun(message));
    }
    let resolved = tokio::select! {
        biased;
        () = ctx.cancelled.cancelled() => return Ok(Announce::Cancelled),
        resolved = pool.resolve(&call.tool) => resolved,
    };
    let tool = match resolved {
        Ok(tool) => tool,
        Err(e) => {
            let message = format!("call `{}`: {e}", call.tool);
            agent.expectation_failed(ctx.turn, step, message.clone());
            return Ok(Announce::NotRun(message));
        }
    };
    let (tool_call_id, title, pending) = if call.permission_meta == PermissionMeta::GeminiCli {
        let id = gemini_cli_updates::tool_call_id(&tool.server, &tool.name);
        let title = gemini_cli_updates::title(&tool.server, &tool.name);
        let pending = gemini_cli_updates::pending_tool_call(&id, &title, &call.args);
        (id, title, pending)
    } else {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let title = format!("{}_{}", tool.server, tool.name);
        let mut pending = mcp_tool_call(&id, &tool.server, &tool.name, &call.args);
        shape_meta(&mut pending, call.permission_meta, &tool);
        (id, title, pending)
    };
    send_update(ctx.cx, ctx.session_id, tool_call_update_of(&pending))?;
    if agent.script.quirks.resend_pending_tool_call {
        send_update(ctx.cx, ctx.session_id, tool_call_update_of(&pending))?;
    }
    Ok(Announce::Announced(Box::new(AnnouncedCall {
        tool,
        tool_call_id,
        title,
        permission_meta: call.permission_meta,
        pending,
        args: call.args.clone(),
        ask: mode != "yolo",
    })))
}

/// Rewrites the pending tool call's `_meta` as the step's `permission_meta` says.
fn shape_meta(pending: &mut Value, meta: PermissionMeta, tool: &ResolvedTool) {
    let Some(object) = pending.as_object_mut() else {
        return;
    };
    match meta {
        // Gemini CLI's shape is built whole in `announce`.
        PermissionMeta::Mcp | PermissionMeta::GeminiCli => {}
        PermissionMeta::Omitted => {
            object.remove("_meta");
        }
        PermissionMeta::SanitizedTitle => {
            let title = tool.title.as_deref().unwrap_or(&tool.name);
            let sanitized: String = title
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            object.insert(
                "_meta".into(),
                serde_json::json!({"mcp": {"tool": sanitized, "server": tool.server},
                                   "is_mcp_tool_call": true}),
            );
        }
    }
}

/// Asks permission for an announced call (unless in `yolo`); a rejection marks the tool
/// call `failed`.
pub async fn permit(ctx: &TurnContext<'_>, call: &AnnouncedCall) -> Result<Permit, Error> {
    if !call.ask {
        return Ok(Permit::Allowed);
    }
    let gemini_cli = call.permission_meta == PermissionMeta::GeminiCli;
    let options = if gemini_cli {
        gemini_cli_updates::permission_options(&call.tool.server, &call.tool.name)
    } else {
        permission_options()
    };
    let reply = request_permission(ctx, &call.pending, options).await?;
    let answer = match reply {
        PermissionReply::Selected(option) if option == "allow" && !gemini_cli => {
            return Ok(Permit::Allowed);
        }
        PermissionReply::Selected(option) if gemini_cli && gemini_cli_updates::allows(&option) => {
            return Ok(Permit::Allowed);
        }
        PermissionReply::Abandoned => return Ok(Permit::Abandoned),
        other => other.describe(),
    };
    send_update(
        ctx.cx,
        ctx.session_id,
        finished(call, &call.tool_call_id, false, None),
    )?;
    ctx.agent.log.info(
        "tool_runner.py:141",
        &format!("permission for {} answered {answer}", call.title),
    );
    Ok(Permit::Rejected(answer))
}

/// How long an in-flight `tools/call` is still awaited after `session/cancel`, so that
/// the reply a client settles it with as it tears the turn down reaches the journal
/// (C50: an `isError` result, not a transport failure) before the prompt answers
/// `cancelled`.
const SETTLE_AFTER_CANCEL: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs an allowed call: `in_progress`, the real MCP `tools/call`, then `completed` or
/// `failed`. `None` when `session/cancel` arrived first: the call is still awaited for
/// 2 s (its reply, or its failure, journaled as any answer), and
/// journaled as abandoned if nothing settles it by then.
pub async fn execute(
    ctx: &TurnContext<'_>,
    call: &AnnouncedCall,
) -> Result<Option<CallOutcome>, Error> {
    let superseding;
    let id = if ctx.agent.script.quirks.supersede_approved_call {
        let never = tool_call_finished(&call.tool_call_id, false, Some(NEVER_EXECUTED));
        send_update(ctx.cx, ctx.session_id, never)?;
        superseding = format!("{}:{}", ctx.session_id, 7 + ctx.turn);
        let running = superseding_tool_call(&superseding, &call.title, &call.args);
        send_update(ctx.cx, ctx.session_id, running)?;
        &superseding
    } else {
        let running = if call.permission_meta == PermissionMeta::GeminiCli {
            gemini_cli_updates::status_update(&call.tool_call_id, &call.title, "in_progress")
        } else {
            tool_call_running(&call.tool_call_id, &call.title)
        };
        send_update(ctx.cx, ctx.session_id, running)?;
        &call.tool_call_id
    };
    let mut pending = std::pin::pin!(call.tool.connection.call(&call.tool.name, &call.args));
    let called = tokio::select! {
        biased;
        () = ctx.cancelled.cancelled() => {
            // The reply the client settles the call with at its teardown (or the transport
            // failure) is journaled by the call itself: it is awaited a little longer.
            if tokio::time::timeout(SETTLE_AFTER_CANCEL, pending).await.is_err() {
                call.tool.connection.abandoned_call();
            }
            return Ok(None);
        }
        called = &mut pending => called,
    };
    let display = format!("Call {}", call.tool.name);
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
        finished(call, id, completed, Some(&display)),
    )?;
    Ok(Some(outcome))
}

/// The call's final update (completed or failed); Gemini CLI's carries the call's title.
fn finished(call: &AnnouncedCall, id: &str, completed: bool, raw_output: Option<&str>) -> Value {
    let mut update = tool_call_finished(id, completed, raw_output);
    if call.permission_meta == PermissionMeta::GeminiCli
        && let Some(map) = update.as_object_mut()
    {
        map.insert("title".into(), Value::from(call.title.as_str()));
    }
    update
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
