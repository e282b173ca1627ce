//! Tool rounds inside one ACP prompt. A round starts when DSH hands `generate` its
//! results and ends when the next round's calls are all in DSH's hands: the adapter
//! answers the parked MCP requests, the fake reports the calls done, announces the next
//! call, asks `session/request_permission` (answered by the adapter) and sends the next
//! `tools/call` to the bridge, which parks it and hands it to DSH. A round of 64 parallel
//! calls is timed the same way, across however many generations the calls arrive in.

use std::time::{Duration, Instant};

use antigravity_acp::contract::{ContentBlock, FinishReason, LlmAdapter, StreamChunk};
use antigravity_acp::{ADAPTER_ID, AntigravityProvider, ConfinementMode, SERVER_DEFAULT_MODEL};
use anyhow::bail;
use futures::StreamExt;
use serde_json::{Value, json};

use super::harness::{Bench, chat, drain, echo_tool, expect_finish};
use crate::host::assemble::echoed_round;

/// How an MCP client (the fake's, or a floor's) holds its HTTP connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Connections {
    /// Reused between requests.
    #[value(name = "kept")]
    KeptAlive,
    /// A fresh connection per request (the fake's default, and rmcp's default client).
    Fresh,
}

/// The script of `rounds` rounds of `width` calls each (one `call` step, or a
/// `parallel` step of `width`), then a text.
fn rounds_script(rounds: usize, width: usize, connections: Connections) -> Value {
    let steps: Vec<Value> = (0..rounds)
        .map(|round| {
            let call = |i: usize| json!({"tool": "echo", "args": {"n": round * width + i}});
            if width == 1 {
                json!({"call": call(0)})
            } else {
                json!({"parallel": (0..width).map(call).collect::<Vec<_>>()})
            }
        })
        .chain(std::iter::once(json!({"text": "done"})))
        .collect();
    let keep_alive = connections == Connections::KeptAlive;
    json!({"mcp_client": {"keep_alive": keep_alive}, "turns": [{"steps": steps}]})
}

/// Times `rounds` rounds of `width` calls on a warm process: each round from DSH's
/// results handed to `generate` until DSH holds all `width` calls of the next round.
pub async fn tool_rounds(
    bench: &Bench,
    rounds: usize,
    width: usize,
    connections: Connections,
) -> anyhow::Result<Vec<Duration>> {
    let script = rounds_script(rounds, width, connections);
    let provider = bench.provider(&script, ConfinementMode::Off, |_| {})?;
    let timed = time_rounds(&provider, rounds, width).await;
    provider.dispose().await;
    timed
}

fn calls_in(parts: &[StreamChunk]) -> usize {
    parts
        .iter()
        .filter(|p| {
            matches!(
                p,
                StreamChunk::BlockEnd {
                    block: ContentBlock::ToolCall(_),
                    ..
                }
            )
        })
        .count()
}

async fn time_rounds(
    provider: &AntigravityProvider,
    rounds: usize,
    width: usize,
) -> anyhow::Result<Vec<Duration>> {
    let model = format!("{ADAPTER_ID}/{SERVER_DEFAULT_MODEL}");
    let mut request = chat("run the rounds", vec![echo_tool()]);
    let mut parts = drain(provider.stream(request.clone())).await;
    let mut generation = 0usize;
    let mut durations = Vec::with_capacity(rounds);
    // The first round's calls may arrive over several generations too.
    let mut held = calls_in(&parts);
    while held < width {
        generation += 1;
        request.messages.extend(answer(generation, &parts, &model)?);
        parts = drain(provider.stream(request.clone())).await;
        held += calls_in(&parts);
    }
    for _ in 0..rounds {
        // DSH's own work (copying the conversation into the request) is not timed.
        let mut elapsed = Duration::ZERO;
        let mut held = 0;
        loop {
            generation += 1;
            request.messages.extend(answer(generation, &parts, &model)?);
            let next_request = request.clone();
            let started = Instant::now();
            let mut stream = provider.stream(next_request);
            let mut next = Vec::new();
            while let Some(part) = stream.next().await {
                next.push(part);
            }
            elapsed += started.elapsed();
            held += calls_in(&next);
            parts = next;
            let stopped = matches!(parts.last(),
                Some(StreamChunk::Finish { reason, .. }) if *reason == FinishReason::Stop);
            if held >= width || stopped {
                break;
            }
        }
        durations.push(elapsed);
    }
    expect_finish(&parts, FinishReason::Stop)?;
    Ok(durations)
}

/// The assistant's calls of `parts` and a result for each.
fn answer(
    generation: usize,
    parts: &[StreamChunk],
    model: &str,
) -> anyhow::Result<Vec<antigravity_acp::contract::Message>> {
    let round = echoed_round(format!("bench-{generation}"), parts, model);
    if round.len() < 2 {
        bail!("a generation ended without a tool call: {:?}", parts.last());
    }
    Ok(round)
}
