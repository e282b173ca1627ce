//! The stream a generation returns: block start/delta/end, tool calls, context occupancy,
//! and exactly one terminal finish or error.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

use super::LlmError;

/// What a text-like block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// Visible text.
    Text,
    /// Reasoning.
    Reasoning,
}

/// Why a generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model finished its answer.
    Stop,
    /// The model wants DSH to run the tool calls it streamed.
    ToolCalls,
    /// The model hit its output limit.
    Length,
    /// The model refused.
    Refusal,
    /// DSH (or disposal) cancelled the generation.
    Cancelled,
}

/// One part of a generation's stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamPart {
    /// A text or reasoning block opens at `index`.
    BlockStart {
        /// The block's index within this generation.
        index: u32,
        /// What the block holds.
        kind: BlockKind,
    },
    /// More text for the open block at `index`.
    BlockDelta {
        /// The block's index.
        index: u32,
        /// The new text.
        delta: String,
    },
    /// The block at `index` is complete.
    BlockEnd {
        /// The block's index.
        index: u32,
    },
    /// A complete tool call for DSH to run.
    ToolCall {
        /// The call's block index (after every text/reasoning block before it).
        index: u32,
        /// A fresh correlation id for DSH's assistant message and tool result.
        call_id: String,
        /// DSH's original tool name.
        tool_name: String,
        /// Arguments, already validated against the tool's JSON Schema.
        arguments: Value,
    },
    /// How full the model's context is (not billable usage).
    ContextOccupancy {
        /// Tokens in the context.
        used: u64,
        /// The context window.
        size: u64,
    },
    /// The generation ended. Nothing follows.
    Finish {
        /// Why it ended.
        reason: FinishReason,
    },
}

/// The receiving end of a generation, as DSH consumes it.
///
/// Yields `Ok` parts and ends after [`StreamPart::Finish`] or a single `Err`.
#[derive(Debug)]
pub struct PartStream {
    receiver: mpsc::Receiver<Result<StreamPart, LlmError>>,
}

/// The sending end of a [`PartStream`], held by the adapter.
///
/// The channel is bounded: a slow consumer slows the producer down; nothing is dropped.
#[derive(Debug, Clone)]
pub struct PartSender {
    sender: mpsc::Sender<Result<StreamPart, LlmError>>,
}

/// How many parts may wait unread before the producer waits for DSH.
pub const STREAM_CAPACITY: usize = 64;

impl PartStream {
    /// A connected sender/stream pair.
    pub fn channel() -> (PartSender, PartStream) {
        let (sender, receiver) = mpsc::channel(STREAM_CAPACITY);
        (PartSender { sender }, PartStream { receiver })
    }

    /// A stream that yields one error and ends.
    pub fn failed(error: LlmError) -> PartStream {
        let (sender, receiver) = mpsc::channel(1);
        // A fresh channel of capacity one always has room for its first item.
        if sender.try_send(Err(error)).is_err() {
            tracing::error!("a fresh stream channel refused its first item");
        }
        PartStream { receiver }
    }

    /// Receives the next part, or `None` once the stream has ended.
    pub async fn recv(&mut self) -> Option<Result<StreamPart, LlmError>> {
        self.receiver.recv().await
    }
}

impl Stream for PartStream {
    type Item = Result<StreamPart, LlmError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.receiver.poll_recv(cx)
    }
}

impl PartSender {
    /// Sends a part, waiting while the consumer is behind. Returns `false` once DSH has
    /// dropped the stream.
    pub async fn send(&self, part: StreamPart) -> bool {
        self.sender.send(Ok(part)).await.is_ok()
    }

    /// Sends the terminal error. Returns `false` once DSH has dropped the stream.
    pub async fn fail(&self, error: LlmError) -> bool {
        self.sender.send(Err(error)).await.is_ok()
    }

    /// Whether DSH has dropped the stream (an early return).
    pub fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    /// Resolves once DSH has dropped the stream.
    pub async fn closed(&self) {
        self.sender.closed().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DSH dropping the stream is what `is_closed` and `closed` report: not before.
    #[tokio::test]
    async fn a_dropped_stream_reports_closed_and_refuses_parts() {
        let (sender, stream) = PartStream::channel();
        assert!(!sender.is_closed(), "closed while DSH holds the stream");
        drop(stream);
        assert!(sender.is_closed(), "open after DSH dropped the stream");
        sender.closed().await;
        assert!(!sender.send(StreamPart::BlockEnd { index: 0 }).await);
    }
}
