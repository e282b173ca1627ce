//! `session/prompt` (docs/antigravity-1.3.0.md §8, §12): runs in a task of its own, never
//! in the dispatch loop. It picks the scripted turn for the prompt's text, streams the
//! steps as `session/update`s, and answers `{"stopReason": …}`. A `session/cancel`
//! notification stops the steps at the next boundary (abandoning a pending permission
//! request or MCP call) and the prompt answers `cancelled`. Before the turn, the prompt's
//! text grows the session's conversation on disk (when kept) and its slash commands are
//! intercepted (when `prompt.slash_commands` says so; `/logout` answers the prompt).

use std::sync::Arc;

use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::acp::params::ParamReader;
use crate::acp::rpc_errors::session_not_found;
use crate::acp::session_updates::{message_chunk, send_update, thought_chunk, usage_update};
use crate::journal::JournalEntry;
use crate::script::{Step, StopScript, TurnScript};
use crate::state::fake_agent::FakeAgent;
use crate::state::sessions::TurnRecord;
use crate::turn::client_request_step::run_client_request;
use crate::turn::context::TurnContext;
use crate::turn::expectations::{RecentCalls, check_recent, denied_message};
use crate::turn::parallel_step::{ParallelEnd, run_parallel};
use crate::turn::server_owned_steps::{StepFlow, run_foreign_call, run_native, run_question};
use crate::turn::slash_commands::intercept;
use crate::turn::stream_step::run_stream;
use crate::turn::tool_call_step::{CallEnd, run_call};
use crate::turn::turn_select::{TurnChoice, choose_turn};
use crate::turn::turn_usage::send_turn_usage;

/// The text the fake answers when the script has turns but none matches.
pub const UNMATCHED_REPLY: &str = "fake-antigravity: no scripted turn matches this prompt.";

/// How a turn ended.
enum TurnEnd {
    /// Every step ran.
    Completed,
    /// A permission was denied: `end_turn`, like the real server.
    Denied,
    /// `session/cancel`.
    Cancelled,
}

/// Handles one `session/prompt` to the end (run it in a spawned task). Never fails: a
/// closed connection just ends it.
pub async fn run_prompt(
    agent: Arc<FakeAgent>,
    cx: ConnectionTo<Client>,
    params: Value,
    responder: Responder<Value>,
) {
    let mut reader = ParamReader::new(&params);
    let session_id = reader.required_str("sessionId");
    let blocks = reader.required_array("prompt");
    if let Err(error) = reader.finish() {
        // A failed answer means the connection is gone: there is no one to tell.
        let _connection_gone = responder.respond_with_error(error);
        return;
    }
    let session_id = session_id.unwrap_or_default();
    let Some(prompt) = agent.sessions.begin_prompt(session_id) else {
        let not_found = session_not_found(session_id, &agent.gemini_home);
        let _connection_gone = responder.respond_with_error(not_found);
        return;
    };
    let blocks = blocks.map(Vec::as_slice).unwrap_or_default();
    let text = prompt_text(blocks);
    grow_conversation(&agent, session_id, blocks);
    if agent.script.mcp_client.list_tools_every_prompt {
        list_tools_afresh(&agent, session_id).await;
    }
    let mut agent_text = String::new();
    let answer = match intercept(&agent, &cx, session_id, &text, blocks, &mut agent_text) {
        // A slash command answered the prompt: the scripted turn does not run.
        Ok(Some(stop_reason)) => Ok(stop_reason),
        Ok(None) => {
            let cancelled = &prompt.cancelled;
            answer_prompt(&agent, &cx, session_id, cancelled, &text, &mut agent_text).await
        }
        Err(error) => Err(error),
    };
    let stop_reason = if prompt.cancelled.is_cancelled() {
        after_cancel(&agent, &cx, session_id, &mut agent_text).await;
        Some("cancelled")
    } else {
        answer.ok()
    };
    if stop_reason.is_some_and(|stop| stop != "cancelled") {
        let _connection_gone = send_turn_usage(&agent.script, &cx, session_id, &text, &agent_text);
    }
    agent.sessions.end_prompt(
        session_id,
        &prompt,
        TurnRecord {
            user_text: text,
            agent_text,
        },
    );
    // Without a stop reason the connection is gone: there is no one to answer.
    if let Some(stop_reason) = stop_reason {
        let _connection_gone = responder.respond(json!({ "stopReason": stop_reason }));
        // `mcp_client.fault: call_after_turn` replays its call now.
        crate::faults::mcp_fault_calls::after_prompt_answered().await;
    }
}

/// The text of the trailing chunk some builds send after a cancel (docs/antigravity-1.3.0.md §12).
pub const CANCELLED_NOTICE: &str = "The request was cancelled by the client.";

/// What the script's `cancel` says to do between a cancel and the `cancelled` answer.
async fn after_cancel(
    agent: &FakeAgent,
    cx: &ConnectionTo<Client>,
    session_id: &str,
    agent_text: &mut String,
) {
    let cancel = &agent.script.cancel;
    let trailing = cancel.trailing_chunk.then_some(CANCELLED_NOTICE);
    for text in cancel
        .keep_streaming
        .iter()
        .map(String::as_str)
        .chain(trailing)
    {
        if send_update(cx, session_id, message_chunk(text)).is_err() {
            return;
        }
        agent_text.push_str(text);
    }
    if cancel.honour_after_ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(cancel.honour_after_ms)).await;
    }
}

/// Lists every MCP server's tools before the prompt runs, as the real client may; a
/// failure is journaled as an expectation failure (turn 0, step 0) saying so.
async fn list_tools_afresh(agent: &FakeAgent, session_id: &str) {
    let Some(pool) = agent.sessions.with(session_id, |s| s.mcp.clone()) else {
        return;
    };
    for failure in pool.list_all_afresh().await {
        let message = format!("tools/list at the start of the prompt failed: {failure}");
        agent.expectation_failed(0, 0, message);
    }
}

/// Appends the prompt's text blocks to the session's conversation on disk, when it is
/// kept, first looking whether a held file vanished; a failure is logged and the prompt
/// goes on.
fn grow_conversation(agent: &FakeAgent, session_id: &str, blocks: &[Value]) {
    let Some(files) = agent.conversation_files() else {
        return;
    };
    agent.look_at_held_files("session/prompt");
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    if let Err(error) = files.append_prompt(session_id, &texts) {
        agent.log.warning(
            "conversation_store.py:120",
            &format!("could not append to the conversation of session {session_id}: {error}"),
        );
    }
}

/// The prompt's text blocks, concatenated.
pub fn prompt_text(blocks: &[Value]) -> String {
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect()
}

async fn answer_prompt(
    agent: &FakeAgent,
    cx: &ConnectionTo<Client>,
    session_id: &str,
    cancelled: &CancellationToken,
    text: &str,
    agent_text: &mut String,
) -> Result<&'static str, Error> {
    match choose_turn(&agent.script.turns, text) {
        TurnChoice::Echo => {
            send_update(cx, session_id, message_chunk(text))?;
            agent_text.push_str(text);
            Ok("end_turn")
        }
        TurnChoice::Unmatched => {
            agent
                .log
                .warning("script.py:2", "no scripted turn matches the prompt");
            agent.record(JournalEntry::UnmatchedPrompt {
                prompt: text.to_string(),
            });
            send_update(cx, session_id, message_chunk(UNMATCHED_REPLY))?;
            agent_text.push_str(UNMATCHED_REPLY);
            Ok("end_turn")
        }
        TurnChoice::Turn(index) => {
            let Some(turn) = agent.script.turns.get(index) else {
                return Ok("end_turn");
            };
            let ctx = TurnContext {
                agent,
                cx,
                session_id,
                cancelled,
                turn: index,
            };
            Ok(match run_steps(&ctx, turn, agent_text).await? {
                TurnEnd::Completed => stop_reason(turn.stop),
                TurnEnd::Denied => "end_turn",
                TurnEnd::Cancelled => "cancelled",
            })
        }
    }
}

fn stop_reason(stop: StopScript) -> &'static str {
    match stop {
        StopScript::EndTurn => "end_turn",
        StopScript::MaxTokens => "max_tokens",
        StopScript::Refusal => "refusal",
    }
}

async fn run_steps(
    ctx: &TurnContext<'_>,
    turn: &TurnScript,
    agent_text: &mut String,
) -> Result<TurnEnd, Error> {
    let mut recent: Option<RecentCalls> = None;
    for (index, step) in turn.steps.iter().enumerate() {
        if ctx.cancelled.is_cancelled() {
            return Ok(TurnEnd::Cancelled);
        }
        let flow = match step {
            Step::Text(text) => {
                send_update(ctx.cx, ctx.session_id, message_chunk(text))?;
                agent_text.push_str(text);
                StepFlow::GoesOn
            }
            Step::Stream(stream) => run_stream(ctx, stream, agent_text).await?,
            Step::Thought(text) => {
                send_update(ctx.cx, ctx.session_id, thought_chunk(text))?;
                StepFlow::GoesOn
            }
            Step::Usage(usage) => {
                send_update(ctx.cx, ctx.session_id, usage_update(usage.used, usage.size))?;
                StepFlow::GoesOn
            }
            Step::ExpectResult(expectation) => {
                if let Err(message) = check_recent(expectation, recent.as_ref()) {
                    ctx.agent.expectation_failed(ctx.turn, index, message);
                }
                StepFlow::GoesOn
            }
            Step::WaitForCancel(wait) => {
                let limit = std::time::Duration::from_millis(wait.timeout_ms);
                if tokio::time::timeout(limit, ctx.cancelled.cancelled())
                    .await
                    .is_ok()
                {
                    return Ok(TurnEnd::Cancelled);
                }
                let message = format!("no session/cancel arrived within {} ms", wait.timeout_ms);
                ctx.agent.expectation_failed(ctx.turn, index, message);
                StepFlow::GoesOn
            }
            Step::Call(call) => match run_call(ctx, index, call).await? {
                CallEnd::Ran(outcome) => {
                    recent = Some(RecentCalls::One(index, outcome));
                    StepFlow::GoesOn
                }
                CallEnd::Cancelled => StepFlow::Cancelled,
                CallEnd::Denied(answer) => return Ok(end_denied(ctx, turn, index, &answer)),
            },
            Step::Parallel(calls) => match run_parallel(ctx, index, calls).await? {
                ParallelEnd::Ran(outcomes) => {
                    recent = Some(RecentCalls::Group(index, outcomes));
                    StepFlow::GoesOn
                }
                ParallelEnd::Cancelled => StepFlow::Cancelled,
                ParallelEnd::Denied(answer) => return Ok(end_denied(ctx, turn, index, &answer)),
            },
            Step::Native(native) => run_native(ctx, index, native).await?,
            Step::Question(question) => run_question(ctx, question).await?,
            Step::ForeignCall(foreign) => run_foreign_call(ctx, foreign).await?,
            Step::ClientRequest(request) => run_client_request(ctx, index, request).await?,
        };
        if flow == StepFlow::Cancelled {
            return Ok(TurnEnd::Cancelled);
        }
    }
    Ok(TurnEnd::Completed)
}

/// A host call (or group) at `index` was denied: the turn ends there, and every later
/// `expect_result` is journaled as failed, saying why.
fn end_denied(ctx: &TurnContext<'_>, turn: &TurnScript, index: usize, answer: &str) -> TurnEnd {
    for (later, step) in turn.steps.iter().enumerate().skip(index + 1) {
        if matches!(step, Step::ExpectResult(_)) {
            let message = denied_message(index, answer);
            ctx.agent.expectation_failed(ctx.turn, later, message);
        }
    }
    TurnEnd::Denied
}
