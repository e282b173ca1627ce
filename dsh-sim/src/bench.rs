//! `dsh-sim bench`: measures the adapter through real processes and real HTTP, against
//! the fake. Three figures: a whole text turn (spawn, handshake, prompt, finish), one tool
//! round inside a running prompt (DSH's result in, the next tool call out), and streaming
//! throughput (server chunks to DSH parts). Speed targets live here, never in tests.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use antigravity_acp::contract::{
    AssistantPart, FinishReason, GenerateRequest, LlmAdapter, Message, PartStream, StreamPart,
    ToolCallPart, ToolDefinition, ToolResult, UserPart,
};
use antigravity_acp::{AdapterConfig, AntigravityProvider, DEFAULT_MODEL, ServerCommand};
use futures::StreamExt;
use serde_json::{Value, json};

/// How much work each benchmark does.
#[derive(Debug, Clone, Copy)]
pub struct BenchSettings {
    /// Text turns to time (each its own server process).
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
}

/// Runs the three benchmarks, with `fake_program` as the server (`fake-server` subcommand).
pub async fn run_bench(
    fake_program: &Path,
    settings: BenchSettings,
) -> Result<BenchReport, BenchError> {
    let workspace = tempfile::Builder::new()
        .prefix("dsh-sim-bench-")
        .tempdir()?;
    let text_turn = {
        let script = json!({"turns": [{"steps": [{"text": "hello"}]}]});
        let provider = provider(fake_program, workspace.path(), "text", &script)?;
        let mut durations = Vec::with_capacity(settings.turns);
        for _ in 0..settings.turns {
            let started = Instant::now();
            let parts = drain(provider.generate(chat("hi", vec![]))).await?;
            expect_finish(&parts, FinishReason::Stop)?;
            durations.push(started.elapsed());
        }
        provider.dispose().await;
        Sample::new(
            "text turn: generate to finish(stop), own process",
            durations,
        )
    };
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
        let mut stream = provider.generate(chat("stream", vec![]));
        let mut first = None;
        let mut parts = 0usize;
        let mut last = StreamPart::Finish {
            reason: FinishReason::Cancelled,
        };
        while let Some(item) = stream.next().await {
            let part = item.map_err(|e| BenchError::Stream(e.to_string()))?;
            first.get_or_insert_with(Instant::now);
            parts += 1;
            last = part;
        }
        let elapsed = first.map(|f| f.elapsed()).unwrap_or_default();
        provider.dispose().await;
        if !matches!(
            last,
            StreamPart::Finish {
                reason: FinishReason::Stop
            }
        ) {
            return Err(BenchError::Stream(format!("streaming ended with {last:?}")));
        }
        let rate = parts as f64 / elapsed.as_secs_f64().max(1e-9);
        (
            rate,
            Sample::new("streaming: first part to finish", vec![elapsed]),
        )
    };
    Ok(BenchReport {
        samples: vec![text_turn, tool_round, stream_sample],
        parts_per_second,
        chunks: settings.chunks,
        peak_rss_kib: peak_rss_kib(),
    })
}

fn provider(
    fake_program: &Path,
    workspace: &Path,
    name: &str,
    script: &Value,
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
        ..AdapterConfig::default()
    };
    Ok(Arc::new(AntigravityProvider::new(config)))
}

fn chat(text: &str, tools: Vec<ToolDefinition>) -> GenerateRequest {
    let mut request = GenerateRequest::chat(
        DEFAULT_MODEL,
        "You are benchmarked.",
        vec![Message::User(vec![UserPart::Text(text.to_owned())])],
    );
    request.tools = tools;
    request
}

async fn drain(stream: PartStream) -> Result<Vec<StreamPart>, BenchError> {
    stream
        .map(|item| item.map_err(|e| BenchError::Stream(e.to_string())))
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect()
}

fn expect_finish(parts: &[StreamPart], reason: FinishReason) -> Result<(), BenchError> {
    match parts.last() {
        Some(StreamPart::Finish { reason: got }) if *got == reason => Ok(()),
        other => Err(BenchError::Stream(format!(
            "expected finish({reason:?}), got {other:?}"
        ))),
    }
}

/// Drives `rounds` sequential tool calls of one prompt; times each continuation from the
/// moment DSH calls `generate` with its result to the next tool call (or the finish).
async fn tool_rounds(
    provider: &AntigravityProvider,
    rounds: usize,
) -> Result<Vec<Duration>, BenchError> {
    let echo = ToolDefinition {
        name: "echo".into(),
        description: "Echoes its arguments.".into(),
        input_schema: json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
    };
    let mut request = chat("run the rounds", vec![echo]);
    let mut parts = drain(provider.generate(request.clone())).await?;
    let mut durations = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let calls: Vec<ToolCallPart> = parts
            .iter()
            .filter_map(|part| match part {
                StreamPart::ToolCall {
                    call_id,
                    tool_name,
                    arguments,
                    ..
                } => Some(ToolCallPart {
                    call_id: call_id.clone(),
                    tool_name: tool_name.clone(),
                    arguments: arguments.clone(),
                }),
                _ => None,
            })
            .collect();
        if calls.is_empty() {
            return Err(BenchError::Stream(
                "a round ended without a tool call".into(),
            ));
        }
        let results = calls
            .iter()
            .map(|call| ToolResult {
                call_id: call.call_id.clone(),
                tool_name: call.tool_name.clone(),
                output: call.arguments.clone(),
                is_error: false,
            })
            .collect();
        request.history.push(Message::Assistant(
            calls.into_iter().map(AssistantPart::ToolCall).collect(),
        ));
        request.history.push(Message::Tool(results));
        let started = Instant::now();
        let mut stream = provider.generate(request.clone());
        let first = stream.next().await;
        durations.push(started.elapsed());
        let mut rest = drain(stream).await?;
        if let Some(first) = first {
            rest.insert(0, first.map_err(|e| BenchError::Stream(e.to_string()))?);
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
