//! Text turns and their floors: a turn on a cold process (its own spawn, `initialize`,
//! bridge, `session/new`, prompt, one chunk, finish) against one on a warm pooled
//! process, and a cold turn against the bare start-up it cannot avoid: spawning the fake
//! and having its `initialize` answered (with the spawn-and-pipe floor of a trivial
//! process beside it).

use std::process::Stdio;
use std::time::{Duration, Instant};

use antigravity_acp::ConfinementMode;
use antigravity_acp::contract::{FinishReason, LlmAdapter};
use anyhow::Context;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::bare_acp::BareClient;
use super::harness::{Bench, chat, drain, echo_tool, expect_finish};

/// The fake's start-up delay for the warm/cold comparison: the real 1.3.0 server answers
/// `initialize` after 1.2–1.4 s warm, 2.9 s cold (docs/antigravity-1.3.0.md §2).
pub const SERVER_START_UP: Duration = Duration::from_millis(1200);

/// Times `count` text turns, one after another. Each offers a tool (as DSH does), so it
/// is a tool turn: it checks out a pooled process and starts a fresh bridge; the fake
/// answers with text.
async fn text_turns(
    provider: &antigravity_acp::AntigravityProvider,
    count: usize,
) -> anyhow::Result<Vec<Duration>> {
    let mut durations = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        let parts = drain(provider.stream(chat("hi", vec![echo_tool()]))).await;
        expect_finish(&parts, FinishReason::Stop)?;
        durations.push(started.elapsed());
    }
    Ok(durations)
}

fn text_script(startup_delay: Duration) -> serde_json::Value {
    json!({
        "turns": [{"steps": [{"text": "hello"}]}],
        "process": {"startup_delay_ms": startup_delay.as_millis() as u64},
    })
}

/// `count` cold text turns, each on a process of its own whose `initialize` the fake
/// answers after `startup_delay`: each by a provider of its own, disposed (its process
/// reaped) before the next turn starts, so no turn shares the machine with the last
/// one's teardown.
pub async fn cold_turns(
    bench: &Bench,
    count: usize,
    startup_delay: Duration,
    confinement: ConfinementMode,
) -> anyhow::Result<Vec<Duration>> {
    let script = text_script(startup_delay);
    let mut durations = Vec::with_capacity(count);
    for _ in 0..count {
        let provider = bench.provider(&script, confinement, |_| {})?;
        let timed = text_turns(&provider, 1).await;
        provider.dispose().await;
        durations.extend(timed?);
    }
    Ok(durations)
}

/// `count` warm text turns on a pooled process (started by one untimed turn first).
pub async fn warm_turns(bench: &Bench, count: usize) -> anyhow::Result<Vec<Duration>> {
    let provider = bench.provider(&text_script(Duration::ZERO), ConfinementMode::Off, |_| {})?;
    text_turns(&provider, 1).await?;
    let durations = text_turns(&provider, count).await;
    provider.dispose().await;
    durations
}

/// `count` times: spawn the fake (no start-up delay) and have `initialize` answered by a
/// bare SDK client, from the spawn to the answer.
pub async fn spawn_to_initialize(bench: &Bench, count: usize) -> anyhow::Result<Vec<Duration>> {
    let script = bench.script_file(&text_script(Duration::ZERO))?;
    let script = script.display().to_string();
    let mut durations = Vec::with_capacity(count);
    for _ in 0..count {
        let client =
            BareClient::spawn(&bench.program, &["fake-server", "--script", &script]).await?;
        client.initialize().await?;
        durations.push(client.spawned_at.elapsed());
        client.close().await?;
    }
    Ok(durations)
}

/// `count` times: spawn `cat`, write a line to it and read it back.
pub async fn spawn_and_pipe(count: usize) -> anyhow::Result<Vec<Duration>> {
    let mut durations = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        let mut child = tokio::process::Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("cannot start cat")?;
        let mut stdin = child.stdin.take().context("no stdin")?;
        let mut stdout = child.stdout.take().context("no stdout")?;
        stdin.write_all(b"ping\n").await?;
        let mut echoed = [0u8; 5];
        stdout.read_exact(&mut echoed).await?;
        durations.push(started.elapsed());
        drop(stdin);
        child.wait().await?;
    }
    Ok(durations)
}
