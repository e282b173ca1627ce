//! `TurnLoop`: a turn's event loop, a two-phase state machine (see the crate's
//! `concepts` page). While **streaming**, DSH holds a stream: the server's chunks become
//! blocks on it, and bridge calls become DSH tool calls, after which the stream ends with
//! finish(tool-calls) and the loop **parks** the exchange. While **parked**, DSH runs the
//! tools; the loop waits for the continuation (whose results resolve the parked calls by
//! call id, and whose stream the loop streams to next), DSH's abort signal, the tool
//! timeout or disposal. The one ACP prompt spans every round.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::blocks::BlockWriter;
use super::ends::{Outcome, TurnEnds, stop_outcome};
use super::event_queue::EventQueue;
use super::exchange::ToolOutcome;
use super::exchange::{Continuation, ExchangeRegistry, PendingExchange, SegmentHistory};
use super::windows::WindowReport;
use crate::acp::ServerEvent;
use crate::bridge::{ParkedCall, ToolReply};
use crate::contract::{ChunkSender, FinishReason, StreamChunk, ToolCallBlock};
use crate::error::AdapterError;

/// The channels and settings a loop is built from.
#[derive(Debug)]
pub(crate) struct TurnLoopParts {
    pub(crate) events: EventQueue,
    pub(crate) ends: TurnEnds,
    pub(crate) registry: Arc<ExchangeRegistry>,
    pub(crate) id: u64,
    pub(crate) fingerprint: [u8; 32],
    pub(crate) history: SegmentHistory,
    pub(crate) timeout: Duration,
    pub(crate) tool_timeout: Duration,
    /// When the first model segment began (the turn's start).
    pub(crate) segment_started: Instant,
    /// Where the context window a `usage_update` reports is kept for `resolveModel`.
    pub(crate) window: WindowReport,
    /// DSH's `maxTokens` for the first generation (`None`: no cap).
    pub(crate) max_tokens: Option<u64>,
    /// How the turn's server process is confined (`None`: not a subprocess), for the
    /// report of a native action.
    pub(crate) confinement: Option<crate::server::Enforcement>,
}

/// Where the turn stands between the server and DSH. Each phase holds exactly what it
/// needs: only a streaming turn has a stream to write to, only a parked one has calls
/// waiting for DSH.
#[derive(Debug)]
enum Phase {
    /// DSH holds `sink`; server output becomes blocks on it.
    Streaming {
        sink: ChunkSender,
        blocks: BlockWriter,
    },
    /// DSH's stream ended with finish(tool-calls); these calls, by call id, wait for its
    /// results.
    Parked { calls: HashMap<String, ParkedCall> },
}

/// What woke the loop (other than the turn ending).
enum Wake {
    Deadline,
    Call(Option<ParkedCall>),
    Event(Option<ServerEvent>),
    Resume(Option<Continuation>),
}

/// The running loop.
#[derive(Debug)]
pub(crate) struct TurnLoop {
    parts: TurnLoopParts,
    /// `None` once the bridge stopped sending calls (or the turn has no bridge left).
    calls: Option<mpsc::Receiver<ParkedCall>>,
    control: mpsc::Receiver<Continuation>,
    control_tx: mpsc::Sender<Continuation>,
    phase: Phase,
    /// When the current model segment (streaming) or the wait for DSH (parked) times out.
    deadline: Instant,
    /// Chunks the loop made but did not hand to DSH because the turn ended first (their
    /// send lost the race with an abort, a close or a disposal). The block writer already
    /// counted them, so `finish` delivers them ahead of the closing block-end: every
    /// block-end DSH reads is what its deltas assembled.
    unsent: Vec<StreamChunk>,
}

impl TurnLoop {
    /// A loop that streams to `sink` first and takes bridge calls from `calls`.
    pub(crate) fn new(
        parts: TurnLoopParts,
        calls: mpsc::Receiver<ParkedCall>,
        sink: ChunkSender,
    ) -> Self {
        let (control_tx, control) = mpsc::channel(1);
        let deadline = parts.segment_started + parts.timeout;
        let blocks = BlockWriter::with_max_tokens(parts.max_tokens);
        Self {
            parts,
            calls: Some(calls),
            control,
            control_tx,
            phase: Phase::Streaming { sink, blocks },
            deadline,
            unsent: Vec::new(),
        }
    }

    /// Runs until the turn ends.
    pub(crate) async fn run(&mut self) -> Outcome {
        loop {
            let step = match self.wait().await {
                Err(outcome) => Err(outcome),
                Ok(Wake::Deadline) => self.on_deadline().map(|next| self.deadline = next),
                Ok(Wake::Call(Some(call))) => self.on_call(call).await,
                Ok(Wake::Call(None)) => {
                    self.calls = None;
                    Ok(())
                }
                Ok(Wake::Event(Some(event))) => self.on_event(event).await,
                Ok(Wake::Event(None)) => Err(Outcome::Failed(AdapterError::ConnectionClosed(
                    "the prompt",
                ))),
                Ok(Wake::Resume(Some(continuation))) => self.resume(continuation),
                Ok(Wake::Resume(None)) => Err(Outcome::Failed(AdapterError::ConnectionClosed(
                    "the tool exchange",
                ))),
            };
            if let Err(outcome) = step {
                return outcome;
            }
        }
    }

    /// The next thing to handle in the current phase, unless the turn ends first.
    async fn wait(&mut self) -> Result<Wake, Outcome> {
        let deadline = tokio::time::sleep_until(self.deadline);
        match &self.phase {
            Phase::Streaming { sink, .. } => {
                let events = &mut self.parts.events;
                let calls = &mut self.calls;
                let next = async {
                    tokio::select! {
                        biased;
                        () = deadline => Wake::Deadline,
                        // Server events before bridge calls: text the server streamed
                        // before it called a tool is already queued when the call
                        // arrives, and belongs before it.
                        event = events.recv() => Wake::Event(event),
                        call = recv_call(calls) => Wake::Call(call),
                    }
                };
                self.parts.ends.or_end(Some(sink), next).await
            }
            Phase::Parked { .. } => {
                let control = &mut self.control;
                let next = async {
                    tokio::select! {
                        biased;
                        () = deadline => Wake::Deadline,
                        continuation = control.recv() => Wake::Resume(continuation),
                    }
                };
                self.parts.ends.or_end(None, next).await
            }
        }
    }

    /// What the deadline firing means: the turn fails with a timeout, or (a continuation
    /// already claimed the exchange) the next deadline, one model timeout from now.
    fn on_deadline(&self) -> Result<Instant, Outcome> {
        if let Phase::Streaming { .. } = self.phase {
            return Err(Outcome::Failed(AdapterError::Timeout("the model segment")));
        }
        if self.parts.registry.withdraw(self.parts.id) {
            return Err(Outcome::Failed(AdapterError::ToolTimeout));
        }
        // A continuation already claimed the exchange: it is on its way.
        Ok(Instant::now() + self.parts.timeout)
    }

    /// Sends a chunk to DSH while streaming, unless the turn ends first.
    async fn emit(&mut self, part: StreamChunk) -> Result<(), Outcome> {
        self.emit_all([part]).await
    }

    /// Sends chunks to DSH in order while streaming, unless the turn ends first; then the
    /// chunk being sent and those after it are kept for `finish` (a finish among them is
    /// not: the turn's outcome is the terminal chunk).
    async fn emit_all(
        &mut self,
        parts: impl IntoIterator<Item = StreamChunk>,
    ) -> Result<(), Outcome> {
        let Phase::Streaming { sink, .. } = &self.phase else {
            return Ok(());
        };
        let mut parts = parts.into_iter();
        while let Some(part) = parts.next() {
            match self.parts.ends.or_end(Some(sink), sink.reserve()).await {
                Ok(Some(permit)) => permit.send(part),
                Ok(None) => return Err(Outcome::DroppedByDsh),
                Err(outcome) => {
                    self.unsent.extend(
                        std::iter::once(part)
                            .chain(parts)
                            .filter(|p| !matches!(p, StreamChunk::Finish { .. })),
                    );
                    return Err(outcome);
                }
            }
        }
        Ok(())
    }

    async fn emit_call(&mut self, call: &ParkedCall) -> Result<(), Outcome> {
        let Phase::Streaming { blocks, .. } = &mut self.phase else {
            return Ok(());
        };
        let chunks = blocks.tool_call(ToolCallBlock {
            id: call.call_id.clone(),
            name: call.tool_name.clone(),
            // Validated JSON, written as the raw text DSH's tool-call block carries.
            arguments: call.arguments.to_string(),
        });
        self.emit_all(chunks).await
    }

    /// Hands DSH the call and the parallel calls that already arrived, then parks. A call
    /// whose HTTP request is already gone (the server's MCP client dropped it) never
    /// reaches DSH: nobody could take its result, and DSH would run the tool for nothing.
    /// A round left with no call does not pause the stream.
    async fn on_call(&mut self, first: ParkedCall) -> Result<(), Outcome> {
        let mut issued = Vec::new();
        let mut next = Some(first);
        while let Some(call) = next {
            if call.is_abandoned() {
                tracing::debug!("the server gave up on a call before DSH saw it");
            } else {
                self.emit_call(&call).await?;
                issued.push(call);
            }
            // Parallel calls that already arrived join this round.
            next = self.calls.as_mut().and_then(|calls| calls.try_recv().ok());
        }
        if issued.is_empty() {
            return Ok(());
        }
        self.pause(issued).await
    }

    /// Parks the exchange and ends DSH's stream with finish(tool-calls).
    async fn pause(&mut self, issued: Vec<ParkedCall>) -> Result<(), Outcome> {
        self.parts.registry.park(PendingExchange {
            id: self.parts.id,
            issued: issued.iter().map(|c| c.call_id.clone()).collect(),
            fingerprint: self.parts.fingerprint,
            history: self.parts.history.clone(),
            control: self.control_tx.clone(),
            close: self.parts.ends.close.clone(),
        });
        let finish = StreamChunk::finish(FinishReason::ToolCalls);
        if let Err(outcome) = self.emit(finish).await {
            self.parts.registry.withdraw(self.parts.id);
            return Err(outcome);
        }
        let calls = issued
            .into_iter()
            .map(|call| (call.call_id.clone(), call))
            .collect();
        self.phase = Phase::Parked { calls };
        self.deadline = Instant::now() + self.parts.tool_timeout;
        Ok(())
    }

    /// Streams to the continuation's generate from now on, and answers each parked call
    /// with the result of the same call id. A result for no parked call, or a parked call
    /// left without a result, fails the turn (on the new stream) as invalid history.
    fn resume(&mut self, continuation: Continuation) -> Result<(), Outcome> {
        let Continuation {
            results,
            sink,
            abort,
            history,
            max_tokens,
        } = continuation;
        let parked = std::mem::replace(
            &mut self.phase,
            Phase::Streaming {
                sink,
                blocks: BlockWriter::with_max_tokens(max_tokens),
            },
        );
        self.parts.ends.abort = abort;
        self.parts.history = history;
        self.deadline = Instant::now() + self.parts.timeout;
        let Phase::Parked { mut calls } = parked else {
            return Err(Outcome::Failed(AdapterError::InvalidHistory(
                "tool results arrived while no call was waiting for them".to_owned(),
            )));
        };
        for result in results {
            let Some(call) = calls.remove(&result.call_id) else {
                return Err(Outcome::Failed(AdapterError::InvalidHistory(format!(
                    "a tool result answers call `{}`, which is not waiting for one",
                    result.call_id
                ))));
            };
            if !call.resolve(reply_of(result)) {
                tracing::debug!("the server gave up on a call before DSH answered it");
            }
        }
        if let Some(id) = calls.keys().next() {
            return Err(Outcome::Failed(AdapterError::ToolResultsMissing(format!(
                "the tool result for call `{id}` is missing"
            ))));
        }
        Ok(())
    }

    async fn on_event(&mut self, event: ServerEvent) -> Result<(), Outcome> {
        match event {
            ServerEvent::Chunk { kind, mut text } => {
                // Chunks already queued behind this one cross to DSH in the same delta.
                self.parts.events.coalesce_into(kind, &mut text);
                let (parts, capped) = match &mut self.phase {
                    Phase::Streaming { blocks, .. } => {
                        let parts = blocks.delta(kind, text);
                        (parts, blocks.is_capped())
                    }
                    Phase::Parked { .. } => (Vec::new(), false),
                };
                self.emit_all(parts).await?;
                // DSH's maxTokens reached: the open block closes as the loop finishes,
                // and the prompt is cancelled.
                if capped {
                    return Err(Outcome::CapReached);
                }
                Ok(())
            }
            // Context occupancy, not billable usage: no usage chunk is invented (C71);
            // the window it reports serves `resolveModel`.
            ServerEvent::Usage { size } => {
                self.parts.window.record(size);
                Ok(())
            }
            ServerEvent::NativeAction => Err(Outcome::Failed(AdapterError::NativeToolRejected {
                action: "a server-owned tool started running".to_owned(),
                confinement: self.parts.confinement,
            })),
            ServerEvent::PromptDone(Ok(stop)) => {
                let mut has_content = false;
                if let Phase::Streaming { blocks, .. } = &mut self.phase {
                    has_content = blocks.has_content();
                    if let Some(part) = blocks.close() {
                        self.emit(part).await?;
                    }
                }
                Err(match stop_outcome(stop, has_content) {
                    Ok(reason) => Outcome::Finished(reason),
                    Err(error) => Outcome::Failed(error),
                })
            }
            ServerEvent::PromptDone(Err(error)) => Err(Outcome::Failed(error)),
        }
    }

    /// Ends the loop: settles parked calls, closes an open block, and hands back the
    /// stream that gets the terminal part (the current one, or that of a continuation
    /// which claimed the exchange just as it ended), the event channel, and whether the
    /// turn ended settled (no parked call left unanswered).
    pub(crate) async fn finish(
        mut self,
        outcome: &Outcome,
        grace: Duration,
    ) -> (Option<ChunkSender>, EventQueue, bool) {
        self.control.close();
        let (sink, closing_part, settled) = match self.phase {
            Phase::Streaming { sink, mut blocks } => (Some(sink), blocks.close(), true),
            Phase::Parked { calls } => {
                // Dropping a parked call answers its HTTP request with an error result.
                let settled = calls.is_empty();
                drop(calls);
                (self.control.try_recv().ok().map(|c| c.sink), None, settled)
            }
        };
        let deliverable = !matches!(outcome, Outcome::DroppedByDsh);
        if let (true, Some(sink)) = (deliverable, &sink) {
            for part in self.unsent.drain(..).chain(closing_part) {
                if tokio::time::timeout(grace, sink.send(part)).await.is_err() {
                    tracing::debug!("DSH did not take the closing chunks");
                    break;
                }
            }
        }
        (sink, self.parts.events, settled)
    }
}

/// The next bridge call, or never once the bridge stopped sending them.
async fn recv_call(calls: &mut Option<mpsc::Receiver<ParkedCall>>) -> Option<ParkedCall> {
    match calls {
        Some(calls) => calls.recv().await,
        None => std::future::pending().await,
    }
}

/// What DSH's result becomes on the MCP side.
fn reply_of(result: ToolOutcome) -> ToolReply {
    ToolReply {
        text: result.text,
        is_error: result.is_error,
    }
}

#[cfg(test)]
mod tests;
