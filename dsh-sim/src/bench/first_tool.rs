//! The first tool stream of a session and its floor. On a warm pooled process, a fresh
//! chat with a tool offered: the adapter binds a bridge, sends `session/new` with its MCP
//! descriptor (the server sends `initialize` and `tools/list` to it), prompts, answers the
//! server's `session/request_permission`, and parks the server's first `tools/call`; timed
//! from `stream` to the finish that hands the call to DSH. The floor is the same requests
//! made by bare SDKs: a bare ACP client's `session/new` and prompt to the same fake, and a
//! new rmcp client's `initialize`, `tools/list` and `tools/call` to an rmcp server.

use std::time::{Duration, Instant};

use antigravity_acp::contract::{FinishReason, LlmAdapter};
use antigravity_acp::{ADAPTER_ID, AntigravityProvider, ConfinementMode, SERVER_DEFAULT_MODEL};
use serde_json::{Value, json};

use super::bare_acp::BareClient;
use super::harness::{Bench, chat, drain, echo_tool, expect_finish};
use crate::host::assemble::echoed_round;

/// What the prompts of the timed chats contain (the fake's script calls a tool on it).
const FIRST_TOOL: &str = "first tool";

/// A chat whose prompt names [`FIRST_TOOL`] calls `echo` once, then says "done"; any other
/// prompt is answered with text.
fn first_tool_script() -> Value {
    json!({"turns": [
        {"match": {"prompt_contains": FIRST_TOOL},
         "steps": [{"call": {"tool": "echo", "args": {"n": 1}}}, {"text": "done"}]},
        {"steps": [{"text": "hello"}]},
    ]})
}

/// One chat: its first stream is timed (to the finish with the tool call); then DSH's
/// result is handed back untimed and the chat runs to its end, so the process returns to
/// the pool.
async fn first_tool_chat(provider: &AntigravityProvider, n: usize) -> anyhow::Result<Duration> {
    let mut request = chat(&format!("{FIRST_TOOL} {n}"), vec![echo_tool()]);
    let started = Instant::now();
    let parts = drain(provider.stream(request.clone())).await;
    let elapsed = started.elapsed();
    expect_finish(&parts, FinishReason::ToolCalls)?;
    let model = format!("{ADAPTER_ID}/{SERVER_DEFAULT_MODEL}");
    request
        .messages
        .extend(echoed_round(format!("first-{n}"), &parts, &model));
    expect_finish(&drain(provider.stream(request)).await, FinishReason::Stop)?;
    Ok(elapsed)
}

/// `count` first tool streams on a warm pooled process (one untimed chat first).
pub async fn first_tool_streams(bench: &Bench, count: usize) -> anyhow::Result<Vec<Duration>> {
    let provider = bench.provider(&first_tool_script(), ConfinementMode::Off, |_| {})?;
    first_tool_chat(&provider, 0).await?;
    let mut durations = Vec::with_capacity(count);
    for n in 1..=count {
        match first_tool_chat(&provider, n).await {
            Ok(elapsed) => durations.push(elapsed),
            Err(error) => {
                provider.dispose().await;
                return Err(error);
            }
        }
    }
    provider.dispose().await;
    Ok(durations)
}

/// `count` times, after one untimed: a bare SDK client's `session/new` and text prompt to
/// the fake playing the same script (one process, kept warm).
pub async fn bare_sessions(bench: &Bench, count: usize) -> anyhow::Result<Vec<Duration>> {
    let script = bench.script_file(&first_tool_script())?;
    let script = script.display().to_string();
    let client = BareClient::spawn(&bench.program, &["fake-server", "--script", &script]).await?;
    client.initialize().await?;
    client.session_and_prompt(bench.workspace(), "hi").await?;
    let mut durations = Vec::with_capacity(count);
    for _ in 0..count {
        durations.push(client.session_and_prompt(bench.workspace(), "hi").await?);
    }
    client.close().await?;
    Ok(durations)
}
