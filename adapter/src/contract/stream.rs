//! The stream a generation returns, in DSH's vocabulary (`StreamChunk` of
//! `@deepseek-ai/dsh-llm`): `block-start`, `text-delta`, `reasoning-delta`,
//! `tool-call-delta`, `block-end` carrying the assembled block, `usage`, and exactly one
//! terminal `finish`. Every type serializes to DSH's own wire names, so a chunk crosses the
//! Node binding as it is. [`ChunkStream`] is the bounded channel DSH reads it from; it
//! guarantees the one finish: a stream whose producer went away without sending one (a
//! panicked task, a bug) ends with an `error` finish, code `ACP_INTERNAL`, never silently
//! (DSH's `BlockAssembler` would read a missing finish as `stop`).

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

use super::error::{LlmError, LlmErrorCode, LlmFailure};
use super::message::ContentBlock;

/// DSH's content block `type` tags, as `block-start` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ContentBlockType {
    /// Visible text.
    Text,
    /// Reasoning.
    Reasoning,
    /// An image reference.
    Image,
    /// A tool call.
    ToolCall,
    /// A tool result.
    ToolResult,
}

/// Why a generation ended (DSH's `FinishReason`, tagged by `kind`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum FinishReason {
    /// The model finished its answer.
    Stop,
    /// The model wants DSH to run the tool calls it streamed.
    ToolCalls,
    /// The model hit its output limit.
    MaxTokens,
    /// The generation was aborted (DSH's signal, an early return, a server-side cancel).
    Aborted {
        /// Why (code `ABORTED`).
        failure: LlmFailure,
    },
    /// The generation failed.
    Error {
        /// Why.
        failure: LlmFailure,
    },
}

impl FinishReason {
    /// The failure an `aborted` or `error` finish carries.
    pub fn failure(&self) -> Option<&LlmFailure> {
        match self {
            Self::Aborted { failure } | Self::Error { failure } => Some(failure),
            _ => None,
        }
    }
}

/// Billable token counts (DSH's `TokenUsage`). The server reports none (its
/// `usage_update` is context occupancy), so the adapter never emits one (C71); the type
/// is here so the contract is DSH's whole vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cached input read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    /// Cached input written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Reasoning tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

/// One chunk of a generation's stream (DSH's `StreamChunk`, tagged by `type`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum StreamChunk {
    /// A block opens at `index`.
    BlockStart {
        /// The block's index within this generation.
        index: u32,
        /// What the block holds.
        block_type: ContentBlockType,
    },
    /// More visible text for the open text block at `index`.
    TextDelta {
        /// The block's index.
        index: u32,
        /// The new text.
        text: String,
    },
    /// More reasoning for the open reasoning block at `index`.
    ReasoningDelta {
        /// The block's index.
        index: u32,
        /// The new text.
        text: String,
    },
    /// Part of a tool call's arguments (the adapter sends the whole JSON in one delta).
    ToolCallDelta {
        /// The block's index.
        index: u32,
        /// The call's correlation id.
        id: String,
        /// DSH's tool name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// Raw JSON text of the arguments.
        arguments_delta: String,
    },
    /// The block at `index` is complete; `block` is what its deltas assembled.
    BlockEnd {
        /// The block's index.
        index: u32,
        /// The assembled block.
        block: ContentBlock,
    },
    /// Billable usage, before the finish (never emitted by this adapter).
    Usage {
        /// The counts.
        usage: TokenUsage,
    },
    /// The generation ended. Nothing follows.
    Finish {
        /// Why it ended.
        reason: FinishReason,
        /// Adapter-private replay state (never set by this adapter).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replay_state: Option<Value>,
    },
}

impl StreamChunk {
    /// A terminal chunk with `reason` and no replay state.
    pub fn finish(reason: FinishReason) -> Self {
        Self::Finish {
            reason,
            replay_state: None,
        }
    }
}

/// How many chunks may wait unread before the producer waits for DSH.
pub const STREAM_CAPACITY: usize = 64;

/// The receiving end of a generation, as DSH consumes it: chunks, ending after exactly
/// one [`StreamChunk::Finish`].
#[derive(Debug)]
pub struct ChunkStream {
    receiver: mpsc::Receiver<StreamChunk>,
    /// Whether the finish was handed out (received, or made up for a producer that went
    /// away without one).
    finished: bool,
}

/// The sending end of a [`ChunkStream`], held by the adapter.
///
/// The channel is bounded: a slow consumer slows the producer down; nothing is dropped.
#[derive(Debug, Clone)]
pub struct ChunkSender {
    sender: mpsc::Sender<StreamChunk>,
}

impl ChunkStream {
    /// A connected sender/stream pair.
    pub fn channel() -> (ChunkSender, ChunkStream) {
        let (sender, receiver) = mpsc::channel(STREAM_CAPACITY);
        (ChunkSender { sender }, ChunkStream::of(receiver))
    }

    fn of(receiver: mpsc::Receiver<StreamChunk>) -> Self {
        Self {
            receiver,
            finished: false,
        }
    }

    /// What the stream hands out for `received`: the chunk (noting a finish), or at the
    /// channel's end the finish a producer failed to send, once.
    fn hand_out(&mut self, received: Option<StreamChunk>) -> Option<StreamChunk> {
        match received {
            Some(chunk) => {
                self.finished |= matches!(chunk, StreamChunk::Finish { .. });
                Some(chunk)
            }
            None if !self.finished => {
                self.finished = true;
                tracing::error!("a stream ended without its finish; ending it ACP_INTERNAL");
                Some(StreamChunk::finish(FinishReason::Error {
                    failure: LlmError::new(
                        LlmErrorCode::AcpInternal,
                        "the adapter ended this stream without a finish (an internal fault)",
                    )
                    .to_failure(),
                }))
            }
            None => None,
        }
    }

    /// A stream that yields one terminal chunk and ends.
    pub fn finished(reason: FinishReason) -> ChunkStream {
        let (sender, receiver) = mpsc::channel(1);
        // A fresh channel of capacity one always has room for its first item.
        if sender.try_send(StreamChunk::finish(reason)).is_err() {
            tracing::error!("a fresh stream channel refused its first item");
        }
        ChunkStream::of(receiver)
    }

    /// Receives the next chunk, or `None` once the stream has ended.
    pub async fn recv(&mut self) -> Option<StreamChunk> {
        let received = self.receiver.recv().await;
        self.hand_out(received)
    }

    /// Waits for the next chunk, then takes every chunk already buffered behind it, up to
    /// `max` in all (at least one). Empty once the stream has ended. This is how the Node
    /// binding crosses into JS once per batch instead of once per chunk.
    pub async fn recv_batch(&mut self, max: usize) -> Vec<StreamChunk> {
        let mut batch = Vec::new();
        self.receiver.recv_many(&mut batch, max.max(1)).await;
        if batch.is_empty() {
            return self.hand_out(None).into_iter().collect();
        }
        self.finished |= batch
            .iter()
            .any(|chunk| matches!(chunk, StreamChunk::Finish { .. }));
        batch
    }
}

impl Stream for ChunkStream {
    type Item = StreamChunk;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.receiver.poll_recv(cx) {
            Poll::Ready(received) => Poll::Ready(self.hand_out(received)),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl ChunkSender {
    /// Sends a chunk, waiting while the consumer is behind. Returns `false` once DSH has
    /// dropped the stream.
    pub async fn send(&self, chunk: StreamChunk) -> bool {
        self.sender.send(chunk).await.is_ok()
    }

    /// Waits for room for one chunk without giving a chunk up: cancelling the wait loses
    /// nothing (the caller still holds its chunk). `None` once DSH has dropped the stream.
    pub(crate) async fn reserve(&self) -> Option<mpsc::Permit<'_, StreamChunk>> {
        self.sender.reserve().await.ok()
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
    use serde_json::json;

    use super::*;
    use crate::contract::{LlmError, LlmErrorCode, ToolCallBlock};

    /// DSH dropping the stream is what `is_closed` and `closed` report: not before.
    #[tokio::test]
    async fn a_dropped_stream_reports_closed_and_refuses_chunks() {
        let (sender, stream) = ChunkStream::channel();
        assert!(!sender.is_closed(), "closed while DSH holds the stream");
        drop(stream);
        assert!(sender.is_closed(), "open after DSH dropped the stream");
        sender.closed().await;
        assert!(!sender.send(StreamChunk::finish(FinishReason::Stop)).await);
    }

    /// A producer that goes away without its finish (a panicked turn task) still ends the
    /// stream with one: an `error` finish, code `ACP_INTERNAL`, then nothing; a stream that
    /// had its finish gets no other, whichever way it is read.
    #[tokio::test]
    async fn a_stream_always_ends_with_exactly_one_finish() {
        let (sender, mut stream) = ChunkStream::channel();
        assert!(
            sender
                .send(StreamChunk::TextDelta {
                    index: 0,
                    text: "x".into()
                })
                .await
        );
        drop(sender);
        assert!(matches!(
            stream.recv().await,
            Some(StreamChunk::TextDelta { .. })
        ));
        let made_up = stream.recv().await;
        let Some(StreamChunk::Finish { reason, .. }) = &made_up else {
            panic!("no finish: {made_up:?}");
        };
        assert_eq!(
            reason.failure().map(|f| f.code.as_str()),
            Some("ACP_INTERNAL")
        );
        assert_eq!(stream.recv().await, None);

        let (sender, mut batched) = ChunkStream::channel();
        drop(sender);
        assert_eq!(batched.recv_batch(8).await.len(), 1, "the made-up finish");
        assert!(batched.recv_batch(8).await.is_empty());

        let (sender, stream) = ChunkStream::channel();
        assert!(sender.send(StreamChunk::finish(FinishReason::Stop)).await);
        drop(sender);
        let all: Vec<StreamChunk> = futures::StreamExt::collect(stream).await;
        assert_eq!(all, [StreamChunk::finish(FinishReason::Stop)]);

        let (sender, mut batched) = ChunkStream::channel();
        assert!(sender.send(StreamChunk::finish(FinishReason::Stop)).await);
        drop(sender);
        assert_eq!(batched.recv_batch(8).await.len(), 1);
        assert!(batched.recv_batch(8).await.is_empty());
    }

    /// A batch takes what is buffered, up to its bound, and never waits for more. Each
    /// batch is bounded, so a sender that buffered nothing fails the test at once
    /// instead of leaving it waiting (the mutant `send -> true` timed out here); the clock
    /// is paused, so that bound passes at once when nothing can arrive.
    #[tokio::test(start_paused = true)]
    async fn a_batch_takes_what_is_buffered_up_to_its_bound() -> crate::TestResult {
        async fn batch(stream: &mut ChunkStream, max: usize) -> Result<usize, String> {
            let wait = std::time::Duration::from_secs(5);
            tokio::time::timeout(wait, stream.recv_batch(max))
                .await
                .map(|batch| batch.len())
                .map_err(|_| format!("a batch of up to {max} found nothing buffered"))
        }
        let (sender, mut stream) = ChunkStream::channel();
        for index in 0..5 {
            let chunk = StreamChunk::TextDelta {
                index,
                text: "x".into(),
            };
            assert!(sender.send(chunk).await);
        }
        assert_eq!(batch(&mut stream, 3).await?, 3);
        assert_eq!(batch(&mut stream, 100).await?, 2);
        assert!(sender.send(StreamChunk::finish(FinishReason::Stop)).await);
        drop(sender);
        assert_eq!(batch(&mut stream, 100).await?, 1);
        assert_eq!(batch(&mut stream, 100).await?, 0);
        Ok(())
    }

    /// Every chunk serializes to DSH's wire names, exactly.
    #[test]
    fn chunks_serialize_to_dsh_wire_names() -> crate::TestResult {
        let chunks = [
            (
                StreamChunk::BlockStart {
                    index: 1,
                    block_type: ContentBlockType::ToolCall,
                },
                json!({"type": "block-start", "index": 1, "blockType": "tool-call"}),
            ),
            (
                StreamChunk::ReasoningDelta {
                    index: 0,
                    text: "hm".into(),
                },
                json!({"type": "reasoning-delta", "index": 0, "text": "hm"}),
            ),
            (
                StreamChunk::ToolCallDelta {
                    index: 1,
                    id: "c1".into(),
                    name: Some("read".into()),
                    arguments_delta: "{}".into(),
                },
                json!({"type": "tool-call-delta", "index": 1, "id": "c1", "name": "read",
                       "argumentsDelta": "{}"}),
            ),
            (
                StreamChunk::BlockEnd {
                    index: 1,
                    block: ContentBlock::ToolCall(ToolCallBlock {
                        id: "c1".into(),
                        name: "read".into(),
                        arguments: "{}".into(),
                    }),
                },
                json!({"type": "block-end", "index": 1,
                       "block": {"type": "tool-call", "id": "c1", "name": "read", "arguments": "{}"}}),
            ),
            (
                StreamChunk::finish(FinishReason::ToolCalls),
                json!({"type": "finish", "reason": {"kind": "tool-calls"}}),
            ),
            (
                StreamChunk::finish(FinishReason::MaxTokens),
                json!({"type": "finish", "reason": {"kind": "max-tokens"}}),
            ),
            (
                StreamChunk::finish(FinishReason::Error {
                    failure: LlmError::new(LlmErrorCode::AcpTimeout, "late").to_failure(),
                }),
                json!({"type": "finish", "reason": {"kind": "error",
                       "failure": {"message": "late", "code": "ACP_TIMEOUT"}}}),
            ),
            (
                StreamChunk::Usage {
                    usage: TokenUsage {
                        input_tokens: 1,
                        output_tokens: 2,
                        cache_read_tokens: None,
                        cache_write_tokens: None,
                        reasoning_tokens: Some(3),
                    },
                },
                json!({"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 2,
                       "reasoningTokens": 3}}),
            ),
        ];
        for (chunk, wire) in chunks {
            assert_eq!(serde_json::to_value(&chunk)?, wire);
            assert_eq!(serde_json::from_value::<StreamChunk>(wire)?, chunk);
        }
        Ok(())
    }
}
