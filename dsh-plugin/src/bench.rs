//! `benchDrain`: bench-only, built only with the `bench` feature
//! (`bench/binding-overhead.mjs` builds its own addon with it; the release addon the package
//! ships has none). Runs one
//! generation and drains its stream inside Rust, so the bench can compare the rate DSH
//! sees through the binding with the adapter's own rate on the same scripted stream, in
//! the same run. Not part of the plugin's API; the plugin never calls it.

use std::time::Instant;

use antigravity_acp::contract::{ContentBlock, LlmAdapter, StreamChunk, ToolCallBlock};
use napi_derive::napi;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::failure::{envelope, to_json};
use crate::provider::{Provider, read_request};

/// What one drained stream measured.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Drained {
    /// Chunks received, the finish included.
    chunks: u64,
    /// From `stream` to the first chunk, in milliseconds.
    first_chunk_ms: f64,
    /// From `stream` to the end of the stream, in milliseconds.
    elapsed_ms: f64,
    /// The finish chunk's `reason.kind`.
    finish: String,
    /// The tool calls the stream handed over, as DSH's `tool-call` blocks.
    tool_calls: Vec<ToolCallBlock>,
}

/// Bench-only: streams `optionsJson` through `provider` and drains it in Rust. Returns
/// `{chunks, firstChunkMs, elapsedMs, finish, toolCalls}` in the envelope (`failure`).
#[napi]
pub async fn bench_drain(provider: &Provider, options_json: String) -> napi::Result<String> {
    let adapter = provider.adapter();
    envelope(async move {
        let options = read_request(&options_json, None, CancellationToken::new())?;
        let started = Instant::now();
        let mut stream = adapter.stream(options);
        let (mut chunks, mut first, mut finish) = (0u64, None, String::new());
        let mut tool_calls = Vec::new();
        loop {
            let batch = stream.recv_batch(1024).await;
            if batch.is_empty() {
                break;
            }
            first.get_or_insert_with(|| started.elapsed());
            chunks += batch.len() as u64;
            tool_calls.extend(batch.iter().filter_map(|chunk| match chunk {
                StreamChunk::BlockEnd {
                    block: ContentBlock::ToolCall(call),
                    ..
                } => Some(call.clone()),
                _ => None,
            }));
            if let Some(StreamChunk::Finish { reason, .. }) = batch.last() {
                finish = serde_json::to_value(reason)
                    .ok()
                    .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_owned))
                    .unwrap_or_default();
            }
        }
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
        to_json(&Drained {
            chunks,
            first_chunk_ms: first.map(ms).unwrap_or_default(),
            elapsed_ms: ms(started.elapsed()),
            finish,
            tool_calls,
        })
    })
    .await
}
