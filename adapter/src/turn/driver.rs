//! `TurnLoop`: a turn's event loop. While DSH holds a stream it forwards the server's
//! chunks as blocks, turns each bridge call into a DSH tool call and pauses with
//! finish(tool-calls), parking the exchange; while DSH runs the tools it waits for the
//! continuation, DSH's abort signal, the tool timeout or disposal. The one ACP prompt
//! spans every round.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::blocks::BlockWriter;
use super::exchange::{Continuation, ExchangeRegistry, HistoryDigest, PendingExchange};
use super::finish_reason;
use super::prompt::output_text;
use crate::acp::ServerEvent;
use crate::bridge::{ParkedCall, ToolReply};
use crate::contract::{FinishReason, PartSender, StreamPart};
use crate::error::AdapterError;

/// How a turn ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The prompt finished.
    Finished(FinishReason),
    /// Something failed.
    Failed(AdapterError),
    /// DSH's abort signal fired.
    Cancelled,
    /// A newer generate replaced the exchange (changed context or tools).
    Superseded,
    /// The provider was disposed.
    Disposed,
    /// DSH dropped the stream (an early return).
    DroppedByDsh,
}

/// The channels and settings a loop is built from.
#[derive(Debug)]
pub(crate) struct TurnLoopParts {
    pub(crate) events: mpsc::Receiver<ServerEvent>,
    pub(crate) calls: mpsc::Receiver<ParkedCall>,
    pub(crate) abort: CancellationToken,
    pub(crate) provider: CancellationToken,
    pub(crate) close: CancellationToken,
    pub(crate) registry: Arc<ExchangeRegistry>,
    pub(crate) id: u64,
    pub(crate) fingerprint: [u8; 32],
    pub(crate) history: HistoryDigest,
    pub(crate) timeout: Duration,
    pub(crate) tool_timeout: Duration,
    /// When the first model segment began (the turn's start).
    pub(crate) segment_started: Instant,
}

/// What woke the loop.
enum Wake {
    Disposed,
    Superseded,
    Cancelled,
    Dropped,
    Deadline,
    Call(Option<ParkedCall>),
    Event(Option<ServerEvent>),
    Resume(Option<Continuation>),
}

/// The running loop.
#[derive(Debug)]
pub(crate) struct TurnLoop {
    parts: TurnLoopParts,
    control: mpsc::Receiver<Continuation>,
    control_tx: mpsc::Sender<Continuation>,
    sink: Option<PartSender>,
    calls_open: bool,
    blocks: BlockWriter,
    awaiting: Vec<ParkedCall>,
    deadline: Instant,
}

impl TurnLoop {
    pub(crate) fn new(parts: TurnLoopParts, sink: PartSender) -> Self {
        let (control_tx, control) = mpsc::channel(1);
        let deadline = parts.segment_started + parts.timeout;
        Self {
            parts,
            control,
            control_tx,
            sink: Some(sink),
            calls_open: true,
            blocks: BlockWriter::default(),
            awaiting: Vec::new(),
            deadline,
        }
    }

    /// Runs until the turn ends.
    pub(crate) async fn run(&mut self) -> Outcome {
        loop {
            let wake = match self.sink.clone() {
                Some(sink) => self.wait_active(&sink).await,
                None => self.wait_idle().await,
            };
            let step = match wake {
                Wake::Disposed => Err(Outcome::Disposed),
                Wake::Superseded => Err(Outcome::Superseded),
                Wake::Cancelled => Err(Outcome::Cancelled),
                Wake::Dropped => Err(Outcome::DroppedByDsh),
                Wake::Deadline => self.on_deadline(),
                Wake::Call(Some(call)) => self.on_call(call).await,
                Wake::Call(None) => {
                    self.calls_open = false;
                    Ok(())
                }
                Wake::Event(Some(event)) => self.on_event(event).await,
                Wake::Event(None) => Err(Outcome::Failed(AdapterError::ConnectionClosed(
                    "the prompt",
                ))),
                Wake::Resume(Some(continuation)) => {
                    self.resume(continuation);
                    Ok(())
                }
                Wake::Resume(None) => Err(Outcome::Failed(AdapterError::ConnectionClosed(
                    "the tool exchange",
                ))),
            };
            if let Err(outcome) = step {
                return outcome;
            }
        }
    }

    async fn wait_active(&mut self, sink: &PartSender) -> Wake {
        let p = &mut self.parts;
        tokio::select! {
            biased;
            () = p.provider.cancelled() => Wake::Disposed,
            () = p.close.cancelled() => Wake::Superseded,
            () = p.abort.cancelled() => Wake::Cancelled,
            () = sink.closed() => Wake::Dropped,
            () = tokio::time::sleep_until(self.deadline) => Wake::Deadline,
            // Server events before bridge calls: text the server streamed before it called
            // a tool is already queued when the call arrives, and belongs before it.
            event = p.events.recv() => Wake::Event(event),
            call = p.calls.recv(), if self.calls_open => Wake::Call(call),
        }
    }

    async fn wait_idle(&mut self) -> Wake {
        let p = &self.parts;
        tokio::select! {
            biased;
            () = p.provider.cancelled() => Wake::Disposed,
            () = p.close.cancelled() => Wake::Superseded,
            () = p.abort.cancelled() => Wake::Cancelled,
            () = tokio::time::sleep_until(self.deadline) => Wake::Deadline,
            continuation = self.control.recv() => Wake::Resume(continuation),
        }
    }

    fn on_deadline(&mut self) -> Result<(), Outcome> {
        if self.sink.is_some() {
            return Err(Outcome::Failed(AdapterError::Timeout("the model segment")));
        }
        if self.parts.registry.withdraw(self.parts.id) {
            return Err(Outcome::Failed(AdapterError::Timeout(
                "waiting for DSH's tool results",
            )));
        }
        // A continuation already claimed the exchange: it is on its way.
        self.deadline = Instant::now() + self.parts.timeout;
        Ok(())
    }

    /// Sends a part to DSH, giving up when DSH aborts or the provider is disposed.
    async fn emit(&mut self, part: StreamPart) -> Result<(), Outcome> {
        let Some(sink) = &self.sink else {
            return Ok(());
        };
        tokio::select! {
            biased;
            () = self.parts.provider.cancelled() => Err(Outcome::Disposed),
            () = self.parts.abort.cancelled() => Err(Outcome::Cancelled),
            sent = sink.send(part) => if sent { Ok(()) } else { Err(Outcome::DroppedByDsh) },
        }
    }

    async fn emit_call(&mut self, call: ParkedCall) -> Result<(), Outcome> {
        let (closed, index) = self.blocks.tool_call();
        if let Some(part) = closed {
            self.emit(part).await?;
        }
        self.emit(StreamPart::ToolCall {
            index,
            call_id: call.call_id.clone(),
            tool_name: call.tool_name.clone(),
            arguments: call.arguments.clone(),
        })
        .await?;
        self.awaiting.push(call);
        Ok(())
    }

    async fn on_call(&mut self, call: ParkedCall) -> Result<(), Outcome> {
        self.emit_call(call).await?;
        // Parallel calls that already arrived join this round.
        while let Ok(next) = self.parts.calls.try_recv() {
            self.emit_call(next).await?;
        }
        self.pause().await
    }

    /// Parks the exchange and ends DSH's stream with finish(tool-calls).
    async fn pause(&mut self) -> Result<(), Outcome> {
        self.parts.registry.park(PendingExchange {
            id: self.parts.id,
            issued: self.awaiting.iter().map(|c| c.call_id.clone()).collect(),
            fingerprint: self.parts.fingerprint,
            history: self.parts.history.clone(),
            control: self.control_tx.clone(),
            close: self.parts.close.clone(),
        });
        let finish = StreamPart::Finish {
            reason: FinishReason::ToolCalls,
        };
        if let Err(outcome) = self.emit(finish).await {
            self.parts.registry.withdraw(self.parts.id);
            return Err(outcome);
        }
        self.sink = None;
        self.deadline = Instant::now() + self.parts.tool_timeout;
        Ok(())
    }

    /// Delivers DSH's results to the parked calls and streams to the new generate.
    fn resume(&mut self, continuation: Continuation) {
        for (call, result) in self.awaiting.drain(..).zip(continuation.results) {
            if call.call_id != result.call_id {
                tracing::error!("a continuation's results are out of order");
            }
            let reply = ToolReply {
                text: output_text(&result.output),
                is_error: result.is_error,
            };
            if !call.resolve(reply) {
                tracing::debug!("the server gave up on a call before DSH answered it");
            }
        }
        self.sink = Some(continuation.sink);
        self.parts.abort = continuation.abort;
        self.parts.history = continuation.history;
        self.blocks = BlockWriter::default();
        self.deadline = Instant::now() + self.parts.timeout;
    }

    async fn on_event(&mut self, event: ServerEvent) -> Result<(), Outcome> {
        match event {
            ServerEvent::Chunk { kind, text } => {
                for part in self.blocks.delta(kind, text) {
                    self.emit(part).await?;
                }
                Ok(())
            }
            ServerEvent::Usage { used, size } => {
                self.emit(StreamPart::ContextOccupancy { used, size }).await
            }
            ServerEvent::NativeAction => Err(Outcome::Failed(AdapterError::NativeToolRejected(
                "a server-owned tool started running".to_owned(),
            ))),
            ServerEvent::PromptDone(Ok(stop)) => {
                if let Some(part) = self.blocks.close() {
                    self.emit(part).await?;
                }
                Err(Outcome::Finished(finish_reason(stop)))
            }
            ServerEvent::PromptDone(Err(error)) => Err(Outcome::Failed(error)),
        }
    }

    /// Ends the loop: settles parked calls, closes an open block, and hands back the
    /// stream that gets the terminal part (the current one, or that of a continuation
    /// which claimed the exchange just as it ended) and the event channel.
    pub(crate) async fn finish(
        mut self,
        outcome: &Outcome,
        grace: Duration,
    ) -> (Option<PartSender>, mpsc::Receiver<ServerEvent>) {
        self.control.close();
        if self.sink.is_none() {
            self.sink = self.control.try_recv().ok().map(|c| c.sink);
        }
        // Dropping a parked call answers its HTTP request with an error result.
        self.awaiting.clear();
        let deliverable = !matches!(outcome, Outcome::DroppedByDsh | Outcome::Disposed);
        if let (true, Some(sink), Some(part)) = (deliverable, &self.sink, self.blocks.close())
            && tokio::time::timeout(grace, sink.send(part)).await.is_err()
        {
            tracing::debug!("DSH did not take the closing block part");
        }
        (self.sink, self.parts.events)
    }
}
