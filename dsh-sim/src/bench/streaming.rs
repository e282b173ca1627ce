//! Streaming: the rate at which the server's message chunks become DSH parts, against the
//! official SDK client's ceiling on the same frames: the same fake, the same script, read
//! by a bare client whose notification handler only counts. Both rates are the chunks
//! over the time from the first chunk received to the end of the prompt, on a warm
//! process.

use std::time::{Duration, Instant};

use antigravity_acp::contract::{FinishReason, LlmAdapter, StreamChunk};
use antigravity_acp::{AntigravityProvider, ConfinementMode};
use anyhow::bail;
use futures::StreamExt;
use serde_json::{Value, json};
use std::sync::Arc;

use super::bare_acp::BareClient;
use super::harness::{Bench, chat};

/// The script that streams `chunks` one-character message chunks.
fn stream_script(chunks: usize) -> Value {
    json!({"turns": [{"steps": [{"stream": {"text": "x".repeat(chunks), "code_points": 1}}]}]})
}

/// A warm provider streaming `chunks` per prompt (its process started by one untimed
/// stream), for [`adapter_rate`].
pub async fn streaming_provider(
    bench: &Bench,
    chunks: usize,
) -> anyhow::Result<Arc<AntigravityProvider>> {
    let provider = bench.provider(&stream_script(chunks), ConfinementMode::Off, |_| {})?;
    adapter_rate(&provider, chunks).await?;
    Ok(provider)
}

/// Server chunks per second through the adapter to DSH parts: `chunks` over the time
/// from DSH's first part to the finish.
pub async fn adapter_rate(provider: &AntigravityProvider, chunks: usize) -> anyhow::Result<f64> {
    let mut stream = provider.stream(chat("stream", vec![]));
    let mut first = None;
    let mut streamed = 0usize;
    let mut last = None;
    while let Some(part) = stream.next().await {
        first.get_or_insert_with(Instant::now);
        if let StreamChunk::TextDelta { text, .. } = &part {
            streamed += text.chars().count();
        }
        last = Some(part);
    }
    let elapsed = first.map(|f| f.elapsed()).unwrap_or_default();
    // The adapter may join chunks that queued up into one delta: count characters.
    if last != Some(StreamChunk::finish(FinishReason::Stop)) || streamed != chunks {
        bail!("streaming ended with {last:?} after {streamed} of {chunks} characters");
    }
    Ok(rate(chunks as u64, elapsed))
}

/// A bare SDK client on the fake streaming `chunks` per prompt, initialized.
pub async fn ceiling_client(bench: &Bench, chunks: usize) -> anyhow::Result<BareClient> {
    let script = bench.script_file(&stream_script(chunks))?;
    let script = script.display().to_string();
    let client = BareClient::spawn(&bench.program, &["fake-server", "--script", &script]).await?;
    client.initialize().await?;
    Ok(client)
}

/// Chunks per second the bare SDK client reads off the same stream.
pub async fn ceiling_rate(
    client: &BareClient,
    bench: &Bench,
    chunks: usize,
) -> anyhow::Result<f64> {
    let (seen, elapsed) = client.stream_rate(bench.workspace(), "stream").await?;
    if seen != chunks as u64 {
        bail!("the bare client saw {seen} of {chunks} chunks");
    }
    Ok(rate(seen, elapsed))
}

fn rate(count: u64, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64().max(1e-9)
}
