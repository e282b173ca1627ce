//! `dsh-sim bench`: measures the adapter through real processes and real HTTP, against
//! the fake. Four figures: a text turn on a cold process (spawn, a start-up as slow as the
//! real server's, handshake, prompt, finish) against one on a warm pooled process, as a
//! ratio in the same run; one tool round inside a running prompt (DSH's result in, the
//! next tool call out); and streaming throughput (server chunks to DSH parts). Speed
//! targets live here, never in tests.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use antigravity_acp::contract::{
    ChunkStream, FinishReason, GenerateOptions, LlmAdapter, Message, StreamChunk, ToolSchema,
};
use antigravity_acp::{
    ADAPTER_ID, AdapterConfig, AntigravityProvider, SERVER_DEFAULT_MODEL, ServerCommand,
};

use crate::host::assemble::echoed_round;
use futures::StreamExt;
use serde_json::{Value, json};

/// The fake's start-up delay for the warm/cold comparison: the real 1.3.0 server answers
/// `initialize` after 1.2–1.4 s warm, 2.9 s cold (docs/antigravity-1.3.0.md §2).
pub const SERVER_START_UP: Duration = Duration::from_millis(1200);

/// How many cold text turns are timed (each pays [`SERVER_START_UP`]).
pub const COLD_TURNS: usize = 3;

/// How much work each benchmark does.
#[derive(Debug, Clone, Copy)]
pub struct BenchSettings {
    /// Warm text turns to time (on a pooled process).
    pub turns: usize,
    /// Sequential tool rounds inside one prompt.
    pub rounds: usize,
    /// Text chunks streamed in one turn.
    pub chunks: usize,
}

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The workspace or script could not be written.
    #[error("cannot prepare the benchmark: {0}")]
    Setup(#[from] std::io::Error),
    /// The adapter did not produce what the script makes it produce.
    #[error("unexpected stream: {0}")]
    Stream(String),
}

/// Durations of one measured step.
#[derive(Debug, Clone)]
pub struct Sample {
    /// What was measured.
    pub name: &'static str,
    /// Every measurement, sorted.
    pub durations: Vec<Duration>,
}

impl Sample {
    fn new(name: &'static str, mut durations: Vec<Duration>) -> Self {
        durations.sort();
        Self { name, durations }
    }

    /// The `q`-quantile (0.0..=1.0), nearest rank.
    pub fn quantile(&self, q: f64) -> Duration {
        let last = self.durations.len().saturating_sub(1);
        let rank = ((last as f64) * q).round() as usize;
        self.durations.get(rank).copied().unwrap_or_default()
    }
}

/// Everything `bench` measured.
#[derive(Debug, Clone)]
pub struct BenchReport {
    /// Latency samples.
    pub samples: Vec<Sample>,
    /// Stream parts DSH received per second while the server streamed `chunks` chunks.
    pub parts_per_second: f64,
    /// The chunks streamed.
    pub chunks: usize,
    /// Peak resident memory of this process (adapter and DSH side), in KiB, if known.
    pub peak_rss_kib: Option<u64>,
    /// The median warm text turn over the median cold one (goal: under 0.10).
    pub warm_cold_ratio: f64,
}

/// Runs the three benchmarks, with `fake_program` as the server (`fake-server` subcommand).
pub async fn run_bench(
    fake_program: &Path,
    settings: BenchSettings,
) -> Result<BenchReport, BenchError> {
    let workspace = tempfile::Builder::new()
        .prefix("dsh-sim-bench-")
        .tempdir()?;
    let script = json!({
        "turns": [{"steps": [{"text": "hello"}]}],
        "process": {"startup_delay_ms": SERVER_START_UP.as_millis() as u64},
    });
    let cold_turn = {
        // One session per process: every turn starts its own.
        let provider = provider_with(fake_program, workspace.path(), "cold", &script, |c| {
            c.max_sessions_per_process = 1;
        })?;
        let durations = text_turns(&provider, COLD_TURNS).await?;
        provider.dispose().await;
        Sample::new("text turn, cold: own process (1.2 s start-up)", durations)
    };
    let warm_turn = {
        let provider = provider(fake_program, workspace.path(), "warm", &script)?;
        // The first turn starts the process; the timed ones reuse it from the pool.
        text_turns(&provider, 1).await?;
        let durations = text_turns(&provider, settings.turns).await?;
        provider.dispose().await;
        Sample::new("text turn, warm: pooled process", durations)
    };
    let warm_cold_ratio =
        warm_turn.quantile(0.5).as_secs_f64() / cold_turn.quantile(0.5).as_secs_f64().max(1e-9);
    let tool_round = {
        let steps: Vec<Value> = (0..settings.rounds)
            .map(|i| json!({"call": {"tool": "echo", "args": {"n": i}}}))
            .chain(std::iter::once(json!({"text": "done"})))
            .collect();
        let script = json!({"turns": [{"steps": steps}]});
        let provider = provider(fake_program, workspace.path(), "rounds", &script)?;
        let durations = tool_rounds(&provider, settings.rounds).await?;
        provider.dispose().await;
        Sample::new("tool round: DSH result in, next tool call out", durations)
    };
    let (parts_per_second, stream_sample) = {
        let steps: Vec<Value> = (0..settings.chunks).map(|_| json!({"text": "x"})).collect();
        let script = json!({"turns": [{"steps": steps}]});
        let provider = provider(fake_program, workspace.path(), "stream", &script)?;
        let mut stream = provider.stream(chat("stream", vec![]));
        let mut first = None;
        let mut parts = 0usize;
        let mut last = None;
        while let Some(part) = stream.next().await {
            first.get_or_insert_with(Instant::now);
            parts += 1;
            last = Some(part);
        }
        let elapsed = first.map(|f| f.elapsed()).unwrap_or_default();
        provider.dispose().await;
        if last != Some(StreamChunk::finish(FinishReason::Stop)) {
            return Err(BenchError::Stream(format!("streaming ended with {last:?}")));
        }
        let rate = parts as f64 / elapsed.as_secs_f64().max(1e-9);
        (
            rate,
            Sample::new("streaming: first part to finish", vec![elapsed]),
        )
    };
    Ok(BenchReport {
        samples: vec![cold_turn, warm_turn, tool_round, stream_sample],
        parts_per_second,
        chunks: settings.chunks,
        peak_rss_kib: peak_rss_kib(),
        warm_cold_ratio,
    })
}

/// Times `count` text turns, one after another. Each offers a tool (as DSH does), so it
/// is a tool turn: it checks out a pooled process and starts a fresh bridge; the fake
/// answers with text.
async fn text_turns(
    provider: &AntigravityProvider,
    count: usize,
) -> Result<Vec<Duration>, BenchError> {
    let mut durations = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        let parts = drain(provider.stream(chat("hi", vec![echo_tool()]))).await?;
        expect_finish(&parts, FinishReason::Stop)?;
        durations.push(started.elapsed());
    }
    Ok(durations)
}

fn provider(
    fake_program: &Path,
    workspace: &Path,
    name: &str,
    script: &Value,
) -> Result<Arc<AntigravityProvider>, BenchError> {
    provider_with(fake_program, workspace, name, script, |_| {})
}

fn provider_with(
    fake_program: &Path,
    workspace: &Path,
    name: &str,
    script: &Value,
    adjust: impl FnOnce(&mut AdapterConfig),
) -> Result<Arc<AntigravityProvider>, BenchError> {
    let script_path: PathBuf = workspace.join(format!("{name}.json"));
    std::fs::write(&script_path, script.to_string())?;
    let scratch = workspace.join(format!("{name}-scratch"));
    std::fs::create_dir_all(&scratch)?;
    let config = AdapterConfig {
        server: ServerCommand {
            program: fake_program.to_owned(),
            args: vec![
                "fake-server".into(),
                "--script".into(),
                script_path.display().to_string(),
            ],
            env: Vec::new(),
        }
        .into(),
        scratch_root: Some(scratch),
        // The confined fake reads its script outside its scratch.
        extra_read_paths: vec![script_path.clone()],
        ..AdapterConfig::default()
    };
    let mut config = config;
    adjust(&mut config);
    Ok(Arc::new(AntigravityProvider::new(config)))
}

fn chat(text: &str, tools: Vec<ToolSchema>) -> GenerateOptions {
    let mut request =
        GenerateOptions::new(ADAPTER_ID, SERVER_DEFAULT_MODEL, vec![Message::user(text)]);
    request.system = Some("You are benchmarked.".to_owned());
    request.tools = Some(tools);
    request
}

async fn drain(stream: ChunkStream) -> Result<Vec<StreamChunk>, BenchError> {
    Ok(stream.collect::<Vec<_>>().await)
}

fn expect_finish(parts: &[StreamChunk], reason: FinishReason) -> Result<(), BenchError> {
    match parts.last() {
        Some(StreamChunk::Finish { reason: got, .. }) if *got == reason => Ok(()),
        other => Err(BenchError::Stream(format!(
            "expected finish({reason:?}), got {other:?}"
        ))),
    }
}

fn echo_tool() -> ToolSchema {
    ToolSchema {
        name: "echo".into(),
        description: "Echoes its arguments.".into(),
        parameters: json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
    }
}

/// Drives `rounds` sequential tool calls of one prompt; times each continuation from the
/// moment DSH calls `stream` with its result to the next tool call (or the finish).
async fn tool_rounds(
    provider: &AntigravityProvider,
    rounds: usize,
) -> Result<Vec<Duration>, BenchError> {
    let mut request = chat("run the rounds", vec![echo_tool()]);
    let mut parts = drain(provider.stream(request.clone())).await?;
    let mut durations = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let round = echoed_round(
            format!("bench-{round}"),
            &parts,
            &format!("{ADAPTER_ID}/{SERVER_DEFAULT_MODEL}"),
        );
        if round.len() < 2 {
            return Err(BenchError::Stream(
                "a round ended without a tool call".into(),
            ));
        }
        request.messages.extend(round);
        let started = Instant::now();
        let mut stream = provider.stream(request.clone());
        let first = stream.next().await;
        durations.push(started.elapsed());
        let mut rest = drain(stream).await?;
        if let Some(first) = first {
            rest.insert(0, first);
        }
        parts = rest;
    }
    expect_finish(&parts, FinishReason::Stop)?;
    Ok(durations)
}

/// `VmHWM` of this process, from `/proc/self/status`.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
