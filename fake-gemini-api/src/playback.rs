//! Sending one response's body: a task (owned by the server's tracker) that feeds an
//! mpsc-backed body, event by event for SSE or as one JSON for `generateContent`.
//!
//! The client dropping the request drops the body's receiver, which fails the next send
//! and fires the sender's `closed()`: that is how `wait_for_cancel` sees the cancel.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::response::Response;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::journal::{Journal, JournalEntry};
use crate::plan::PlanItem;
use crate::wire::{Ending, generate_content_response, sse_event, streamed_response, text_part};

/// One response to send.
#[derive(Debug)]
pub struct Playback {
    /// What to send, in order.
    pub items: Vec<PlanItem>,
    /// SSE events (`streamGenerateContent`) or one JSON (`generateContent`).
    pub streaming: bool,
    /// The model named in the path (`modelVersion`).
    pub model: String,
    /// The last event's finish reason and usage.
    pub ending: Ending,
    /// The request's sequence number.
    pub seq: u64,
    /// The turn played.
    pub turn: Option<usize>,
    /// Where cancels and missing cancels are recorded.
    pub journal: Arc<Journal>,
    /// Fires when the server shuts down.
    pub shutdown: CancellationToken,
}

enum Hold {
    Dropped,
    TimedOut,
    ShutDown,
}

type Chunk = Result<Bytes, Infallible>;

impl Playback {
    /// Spawns the sending task on `tracker` and returns the response that streams its body.
    pub fn start(self, tracker: &TaskTracker) -> Response {
        let (sender, receiver) = mpsc::channel::<Chunk>(16);
        let content_type = if self.streaming {
            "text/event-stream"
        } else {
            "application/json"
        };
        tracker.spawn(self.play(sender));
        let chunks = futures::stream::unfold(receiver, |mut receiver| async move {
            receiver.recv().await.map(|chunk| (chunk, receiver))
        });
        streamed_response(content_type, Body::from_stream(chunks))
    }

    async fn play(self, sender: mpsc::Sender<Chunk>) {
        let mut pending: Option<Vec<Value>> = None;
        let mut collected: Vec<Value> = Vec::new();
        for item in &self.items {
            match item {
                PlanItem::Parts(parts) if !self.streaming => collected.extend(parts.clone()),
                PlanItem::Parts(parts) => {
                    if let Some(previous) = pending.replace(parts.clone())
                        && !self.send_event(&sender, previous, None).await
                    {
                        return;
                    }
                }
                PlanItem::Pause(duration) => {
                    if !self.flush(&sender, &mut pending).await {
                        return;
                    }
                    tokio::select! {
                        () = tokio::time::sleep(*duration) => {}
                        () = self.shutdown.cancelled() => return,
                    }
                }
                PlanItem::WaitForCancel { step, timeout } => {
                    if !self.flush(&sender, &mut pending).await {
                        return;
                    }
                    match self.hold(&sender, *timeout).await {
                        Hold::Dropped => {
                            self.journal.append(JournalEntry::Cancelled {
                                seq: self.seq,
                                // wait_for_cancel only stands in scripted turns.
                                turn: self.turn.unwrap_or_default(),
                            });
                            return;
                        }
                        Hold::ShutDown => return,
                        Hold::TimedOut => self.journal.append(JournalEntry::ExpectationFailed {
                            seq: self.seq,
                            turn: self.turn.unwrap_or_default(),
                            step: *step,
                            reason: format!("no cancel within {} ms", timeout.as_millis()),
                        }),
                    }
                }
            }
        }
        if self.streaming {
            let last = pending.unwrap_or_else(|| vec![text_part("")]);
            self.send_event(&sender, last, Some(self.ending)).await;
        } else {
            if collected.is_empty() {
                collected.push(text_part(""));
            }
            let body = generate_content_response(collected, &self.model, Some(self.ending));
            self.send(&sender, Bytes::from(body.to_string())).await;
        }
    }

    /// Sends the held event as a middle event; false when the client is gone.
    async fn flush(&self, sender: &mpsc::Sender<Chunk>, pending: &mut Option<Vec<Value>>) -> bool {
        match pending.take() {
            Some(parts) => self.send_event(sender, parts, None).await,
            None => true,
        }
    }

    async fn send_event(
        &self,
        sender: &mpsc::Sender<Chunk>,
        parts: Vec<Value>,
        ending: Option<Ending>,
    ) -> bool {
        let response = generate_content_response(parts, &self.model, ending);
        self.send(sender, sse_event(&response)).await
    }

    async fn send(&self, sender: &mpsc::Sender<Chunk>, chunk: Bytes) -> bool {
        let sent = sender.send(Ok(chunk)).await.is_ok();
        if !sent {
            tracing::debug!(seq = self.seq, "the client dropped the response mid-way");
        }
        sent
    }

    async fn hold(&self, sender: &mpsc::Sender<Chunk>, timeout: std::time::Duration) -> Hold {
        tokio::select! {
            () = sender.closed() => Hold::Dropped,
            () = tokio::time::sleep(timeout) => Hold::TimedOut,
            () = self.shutdown.cancelled() => Hold::ShutDown,
        }
    }
}
