//! The steps where the server acts on its own rather than through the host's bridge:
//! `native` (a server-owned tool, docs/antigravity-1.3.0.md §8), `question` (a native question, §9) and
//! `foreign_call` (an MCP tool of another server, §10). None makes an MCP request; a
//! `native` step with a `path` really reads or writes it when it runs (see
//! [`crate::turn::native_action`]), and one whose tool the session disabled is withheld
//! (§21). Each shows the client the 1.3.0 frames (a refused `native` step may instead
//! play an agent that asked from inside its running tool: `after_refusal`) and, whatever
//! the client answers, the turn goes on. Only `session/cancel` stops it.

use agent_client_protocol::Error;
use serde_json::{Value, json};

use crate::acp::gemini_cli_updates;
use crate::acp::session_updates::{
    mcp_tool_call, permission_options, send_update, tool_call_finished, tool_call_running,
    tool_call_update_of,
};
use crate::journal::JournalEntry;
use crate::script::refused_native::RefusedNative;
use crate::script::{
    DisabledToolsScript, ForeignCallStep, NativeStep, PermissionMeta, QuestionStep,
};
use crate::turn::context::TurnContext;
use crate::turn::native_action::{act, native_id, raw_input};
use crate::turn::permission_request::{PermissionReply, request_permission};

/// Whether the turn goes on after a step (these steps, and the plain ones of the turn).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepFlow {
    /// The turn goes on with the next step.
    GoesOn,
    /// `session/cancel` arrived: the turn ends with `cancelled`.
    Cancelled,
}

/// The options of a native tool's permission request: allow, allow always (with the
/// prompt-injection warning newer builds attach), deny.
pub fn native_permission_options() -> Value {
    json!([
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always",
         "_meta": {"agy.security.warning": {
             "title": "Always allow this tool?",
             "message": "The agent may have been steered by untrusted content (prompt \
                         injection). Always allowing it skips this check from now on."
         }}},
        {"optionId": "deny", "name": "Deny", "kind": "reject_once"}
    ])
}

fn session_mode(ctx: &TurnContext<'_>) -> Option<String> {
    ctx.agent
        .sessions
        .with(ctx.session_id, |s| s.config.mode.clone())
}

/// Runs the `native` step at `index`, unless its session disabled the tool and the
/// script honours that (then it is withheld: journaled, nothing sent, nothing done).
pub async fn run_native(
    ctx: &TurnContext<'_>,
    index: usize,
    native: &NativeStep,
) -> Result<StepFlow, Error> {
    let session = ctx.agent.sessions.with(ctx.session_id, |s| {
        let disabled = s.disabled_tools.contains(&native.tool);
        (s.config.mode.clone(), s.cwd.clone(), disabled)
    });
    let Some((mode, cwd, disabled)) = session else {
        return Ok(StepFlow::Cancelled);
    };
    if disabled && ctx.agent.script.disabled_tools == DisabledToolsScript::Honour {
        withhold_native(ctx, index, native);
        return Ok(StepFlow::GoesOn);
    }
    let id = native_id(native.id_format, ctx.session_id);
    let kind = native.kind.as_str();
    let input = raw_input(native, &cwd);
    if !native.ask || mode == "yolo" {
        let running = json!({
            "sessionUpdate": "tool_call",
            "toolCallId": id,
            "title": format!("Running {}", native.tool),
            "kind": kind,
            "status": "in_progress",
            "rawInput": input
        });
        send_update(ctx.cx, ctx.session_id, running)?;
        finish_native(ctx, native, &id, &cwd)?;
        return Ok(StepFlow::GoesOn);
    }
    let pending = json!({
        "toolCallId": id,
        "title": format!("Run {}?", native.tool),
        "kind": kind,
        "status": "pending",
        "rawInput": input
    });
    send_update(ctx.cx, ctx.session_id, tool_call_update_of(&pending))?;
    let reply = request_permission(ctx, &pending, native_permission_options()).await?;
    let allowed = match &reply {
        PermissionReply::Abandoned => return Ok(StepFlow::Cancelled),
        PermissionReply::Selected(option) => option == "allow" || option == "allow_always",
        PermissionReply::Cancelled | PermissionReply::Unusable(_) => false,
    };
    ctx.agent.log.info(
        "tool_runner.py:97",
        &format!(
            "permission for native {} answered {}",
            native.tool,
            reply.describe()
        ),
    );
    let runs = match native.after_refusal {
        _ if allowed => true,
        RefusedNative::Failed => false,
        RefusedNative::InProgressThenFailed => {
            send_update(ctx.cx, ctx.session_id, tool_call_running(&id, &native.tool))?;
            false
        }
        RefusedNative::InProgressThenCompleted => true,
    };
    if runs {
        send_update(ctx.cx, ctx.session_id, tool_call_running(&id, &native.tool))?;
        finish_native(ctx, native, &id, &cwd)?;
    } else {
        send_update(ctx.cx, ctx.session_id, tool_call_finished(&id, false, None))?;
    }
    Ok(StepFlow::GoesOn)
}

/// A disabled tool is not offered to the model (docs/antigravity-1.3.0.md §21), so the
/// step that would call it does not happen: it is journaled and logged, nothing else.
fn withhold_native(ctx: &TurnContext<'_>, index: usize, native: &NativeStep) {
    ctx.agent.log.info(
        "tool_registry.py:64",
        &format!(
            "native tool {} is disabled in session {}; not offered to the model",
            native.tool, ctx.session_id
        ),
    );
    ctx.agent.record(JournalEntry::NativeStepWithheld {
        session_id: ctx.session_id.to_owned(),
        tool: native.tool.clone(),
        turn: ctx.turn,
        step: index,
    });
}

/// Runs a native tool for real (when it names a path or a signal), journals each
/// action's real outcome, and reports it `completed` (with its text content) or `failed`
/// (with the OS error).
fn finish_native(
    ctx: &TurnContext<'_>,
    native: &NativeStep,
    id: &str,
    cwd: &str,
) -> Result<(), Error> {
    let actions = act(native, cwd);
    let mut succeeded = true;
    let mut texts = Vec::new();
    for action in &actions {
        ctx.agent.record(action.journal_entry(&native.tool));
        if action.result.is_err() {
            succeeded = false;
            if let Some(why) = action.text() {
                ctx.agent.log.warning("tool_runner.py:212", &why);
            }
        }
        texts.extend(action.text());
    }
    let mut update = tool_call_finished(id, succeeded, None);
    let text = (!texts.is_empty()).then(|| texts.join("\n"));
    if let (Some(map), Some(text)) = (update.as_object_mut(), text) {
        map.insert(
            "content".into(),
            json!([{"type": "content", "content": {"type": "text", "text": text}}]),
        );
    }
    send_update(ctx.cx, ctx.session_id, update)
}

/// Runs a `question` step.
pub async fn run_question(
    ctx: &TurnContext<'_>,
    question: &QuestionStep,
) -> Result<StepFlow, Error> {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    let id = format!("interaction_{}", hex.get(..8).unwrap_or(&hex));
    let tool_call = json!({
        "toolCallId": id,
        "status": "pending",
        "title": question.title,
        "rawInput": {}
    });
    let options: Vec<Value> = question
        .options
        .iter()
        .enumerate()
        .map(|(i, name)| json!({"optionId": (i + 1).to_string(), "name": name, "kind": "allow_once"}))
        .collect();
    let reply = request_permission(ctx, &tool_call, Value::Array(options)).await?;
    if reply == PermissionReply::Abandoned {
        return Ok(StepFlow::Cancelled);
    }
    ctx.agent.log.info(
        "interaction.py:58",
        &format!("question {id} answered {}", reply.describe()),
    );
    Ok(StepFlow::GoesOn)
}

/// Runs a `foreign_call` step.
pub async fn run_foreign_call(
    ctx: &TurnContext<'_>,
    foreign: &ForeignCallStep,
) -> Result<StepFlow, Error> {
    let Some(mode) = session_mode(ctx) else {
        return Ok(StepFlow::Cancelled);
    };
    let gemini_cli = foreign.permission_meta == PermissionMeta::GeminiCli;
    let (id, title, pending, options) = if gemini_cli {
        let id = gemini_cli_updates::tool_call_id(&foreign.server, &foreign.tool);
        let title = gemini_cli_updates::title(&foreign.server, &foreign.tool);
        let pending = gemini_cli_updates::pending_tool_call(&id, &title, &foreign.args);
        let options = gemini_cli_updates::permission_options(&foreign.server, &foreign.tool);
        (id, title, pending, options)
    } else {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let title = format!("{}_{}", foreign.server, foreign.tool);
        let mut pending = mcp_tool_call(&id, &foreign.server, &foreign.tool, &foreign.args);
        if foreign.permission_meta == PermissionMeta::Omitted
            && let Some(map) = pending.as_object_mut()
        {
            map.remove("_meta");
        }
        (id, title, pending, permission_options())
    };
    send_update(ctx.cx, ctx.session_id, tool_call_update_of(&pending))?;
    let allowed = if mode == "yolo" {
        true
    } else {
        let reply = request_permission(ctx, &pending, options).await?;
        if reply == PermissionReply::Abandoned {
            return Ok(StepFlow::Cancelled);
        }
        ctx.agent.log.info(
            "tool_runner.py:141",
            &format!("permission for {title} answered {}", reply.describe()),
        );
        match &reply {
            PermissionReply::Selected(option) if gemini_cli => gemini_cli_updates::allows(option),
            PermissionReply::Selected(option) => option == "allow",
            _ => false,
        }
    };
    let updates = match (gemini_cli, allowed) {
        (true, true) => vec![
            gemini_cli_updates::status_update(&id, &title, "in_progress"),
            gemini_cli_updates::status_update(&id, &title, "completed"),
        ],
        (true, false) => vec![gemini_cli_updates::status_update(&id, &title, "failed")],
        (false, true) => {
            let display = format!("Call {}", foreign.tool);
            vec![
                tool_call_running(&id, &title),
                tool_call_finished(&id, true, Some(&display)),
            ]
        }
        (false, false) => vec![tool_call_finished(&id, false, None)],
    };
    for update in updates {
        send_update(ctx.cx, ctx.session_id, update)?;
    }
    Ok(StepFlow::GoesOn)
}
