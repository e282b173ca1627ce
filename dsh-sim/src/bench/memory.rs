//! Memory of the DSH + adapter process (the servers are processes of their own): how much
//! the resident set grows over many sequential turns on pooled processes, and what one
//! turn in flight holds (turns parked on a tool call, all at once, against none).

use antigravity_acp::ConfinementMode;
use antigravity_acp::contract::{FinishReason, LlmAdapter, Message};
use anyhow::{Context, bail};
use serde_json::json;

use super::harness::{Bench, chat, drain, echo_tool, expect_finish, memory_kib};
use crate::host::assemble::echoed_round;

/// Turns run before the first reading, so allocator pools and the process are warm.
const WARM_UP_TURNS: usize = 50;

/// The resident set's growth in MB over `turns` sequential text turns on a warm pooled
/// process.
pub async fn rss_growth(bench: &Bench, turns: usize) -> anyhow::Result<f64> {
    let script = json!({"turns": [{"steps": [{"text": "hello"}]}]});
    let provider = bench.provider(&script, ConfinementMode::Off, |_| {})?;
    let turn = async || -> anyhow::Result<()> {
        let parts = drain(provider.stream(chat("hi", vec![echo_tool()]))).await;
        expect_finish(&parts, FinishReason::Stop)
    };
    for _ in 0..WARM_UP_TURNS {
        turn().await?;
    }
    let before = memory_kib("VmRSS:").context("no VmRSS in /proc/self/status")?;
    for _ in 0..turns {
        turn().await?;
    }
    let after = memory_kib("VmRSS:").context("no VmRSS in /proc/self/status")?;
    provider.dispose().await;
    Ok((after as f64 - before as f64) / 1024.0)
}

/// The resident set per turn in flight, in MB, measured in a fresh `dsh-sim
/// bench-memory` process (so that no earlier benchmark's freed memory hides it): see
/// [`held_per_turn`].
pub async fn per_turn_in_flight(bench: &Bench, turns: usize) -> anyhow::Result<f64> {
    let output = tokio::process::Command::new(&bench.program)
        .args(["bench-memory", "--in-flight", &turns.to_string()])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .output()
        .await?;
    if !output.status.success() {
        bail!("dsh-sim bench-memory failed: {}", output.status);
    }
    let text = String::from_utf8_lossy(&output.stdout);
    text.trim()
        .parse()
        .with_context(|| format!("dsh-sim bench-memory printed {text:?}, not a number"))
}

/// `dsh-sim bench-memory`: in this (fresh) process, the resident set with `turns` tool
/// turns parked on their first call at once (each on a process of its own, its bridge
/// open), minus the same provider after one turn, per turn, in MB.
pub async fn held_per_turn(program: &std::path::Path, turns: usize) -> anyhow::Result<f64> {
    if turns == 0 {
        bail!("no turns to hold in flight");
    }
    let bench = Bench::new(program)?;
    let script = json!({"turns": [{"steps": [
        {"call": {"tool": "echo", "args": {"n": 1}}},
        {"text": "done"},
    ]}]});
    let provider = bench.provider(&script, ConfinementMode::Off, |c| {
        // One more than held: the warm-up turn frees its slot just after its finish.
        c.max_active_turns = c.max_active_turns.max(turns + 1);
        c.max_idle_processes = c.max_idle_processes.max(turns);
    })?;
    let model = format!(
        "{}/{}",
        antigravity_acp::ADAPTER_ID,
        antigravity_acp::SERVER_DEFAULT_MODEL
    );
    let park = async |count: usize| -> anyhow::Result<Vec<(Vec<Message>, Vec<_>)>> {
        futures::future::try_join_all((0..count).map(|i| {
            let request = chat(&format!("conversation {i}"), vec![echo_tool()]);
            let provider = provider.clone();
            async move {
                let parts = drain(provider.stream(request.clone())).await;
                expect_finish(&parts, FinishReason::ToolCalls)?;
                anyhow::Ok((request.messages, parts))
            }
        }))
        .await
    };
    let finish = async |parked: Vec<(Vec<Message>, Vec<_>)>| -> anyhow::Result<()> {
        futures::future::try_join_all(parked.into_iter().enumerate().map(
            |(i, (history, parts))| {
                let provider = provider.clone();
                let model = model.clone();
                async move {
                    let mut request = chat("", vec![echo_tool()]);
                    request.messages = history;
                    request
                        .messages
                        .extend(echoed_round(format!("held-{i}"), &parts, &model));
                    let parts = drain(provider.stream(request)).await;
                    expect_finish(&parts, FinishReason::Stop)
                }
            },
        ))
        .await?;
        Ok(())
    };
    // One turn first: the provider, the runtime and the allocator are warm.
    let first = park(1).await?;
    finish(first).await?;
    let idle = memory_kib("VmRSS:").context("no VmRSS in /proc/self/status")?;
    let parked = park(turns).await?;
    let held = memory_kib("VmRSS:").context("no VmRSS in /proc/self/status")?;
    finish(parked).await?;
    provider.dispose().await;
    Ok((held as f64 - idle as f64) / 1024.0 / turns as f64)
}
