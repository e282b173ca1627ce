//! One turn: a managed server process, its ACP session, the private bridge (when DSH
//! offers tools) and the event loop that streams to DSH across tool rounds. A turn owns
//! everything it starts and tears all of it down, in a fixed order, however it ends.
//! The crate's `concepts` page explains the words used here and draws the phases.

mod blocks;
mod driver;
mod ends;
mod exchange;
mod prompt;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, PromptRequest, SessionId, StopReason,
};
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

pub(crate) use exchange::{Claim, Continuation, ExchangeRegistry, HistoryDigest, fingerprint};
pub(crate) use prompt::build_prompt;

use crate::acp::{AcpConnection, ServerEvent, SignIn, open_session};
use crate::bridge::{Bridge, ParkedCall, ToolCatalog};
use crate::config::AdapterConfig;
use crate::contract::{FinishReason, PartSender, StreamPart};
use crate::error::AdapterError;
use crate::server::{LaunchLine, ManagedProcess, ScratchDir, ServerLauncher, ServerPipes};
use driver::TurnLoop;
use ends::{Outcome, TurnEnds};

/// How many server events may wait for the turn before the server is held back.
const EVENT_CAPACITY: usize = 256;

/// Everything a fresh turn needs.
#[derive(Debug)]
pub(crate) struct TurnSpec {
    pub(crate) config: Arc<AdapterConfig>,
    /// Where the server comes from (shared by the provider's turns).
    pub(crate) launcher: Arc<ServerLauncher>,
    /// The server model to select; `None` keeps the server's default.
    pub(crate) model: Option<String>,
    pub(crate) prompt: Vec<ContentBlock>,
    pub(crate) catalog: Option<Arc<ToolCatalog>>,
    pub(crate) fingerprint: [u8; 32],
    pub(crate) history: HistoryDigest,
    pub(crate) sink: PartSender,
    pub(crate) abort: CancellationToken,
    /// The provider's token: cancelled on disposal.
    pub(crate) provider: CancellationToken,
    pub(crate) registry: Arc<ExchangeRegistry>,
    pub(crate) id: u64,
    pub(crate) permit: OwnedSemaphorePermit,
}

/// What a turn has started so far, torn down in reverse order.
#[derive(Default)]
struct TurnResources {
    scratch: Option<ScratchDir>,
    bridge: Option<Bridge>,
    process: Option<ManagedProcess>,
    acp: Option<AcpConnection>,
    session: Option<SessionId>,
    /// The task awaiting `session/prompt`; aborted if the turn is dropped mid-way.
    prompt_task: Option<AbortOnDropHandle<()>>,
}

/// How a turn reaches its server.
pub(crate) enum ServerLink {
    /// A managed subprocess, spoken to over its stdio.
    Process(Box<(ManagedProcess, ServerPipes)>),
    /// Any pair of byte streams (to the server, from the server): the driver tests
    /// connect the fake's in-process `serve()` over a duplex.
    #[cfg(test)]
    Streams(
        Box<dyn tokio::io::AsyncWrite + Send + Unpin>,
        Box<dyn tokio::io::AsyncRead + Send + Unpin>,
    ),
}

/// Starts the server of `line` as a managed subprocess in `cwd`.
fn spawn_server(line: &LaunchLine, cwd: &Path) -> Result<ServerLink, AdapterError> {
    let (process, pipes) = ManagedProcess::spawn(line, cwd)?;
    Ok(ServerLink::Process(Box::new((process, pipes))))
}

/// Runs a turn from start to teardown. Spawned on the provider's task tracker.
pub(crate) async fn run_turn(spec: TurnSpec) {
    run_turn_with(spec, spawn_server).await;
}

/// Runs a turn whose server `launch` starts (in the turn's scratch directory).
pub(crate) async fn run_turn_with<L>(spec: TurnSpec, launch: L)
where
    L: FnOnce(&LaunchLine, &Path) -> Result<ServerLink, AdapterError>,
{
    let close = spec.provider.child_token();
    let (events_tx, events) = mpsc::channel(EVENT_CAPACITY);
    let (calls_tx, calls) = mpsc::channel(crate::bridge::MAX_PENDING_CALLS);
    let mut resources = TurnResources::default();
    let ends = TurnEnds {
        provider: spec.provider.clone(),
        close: close.clone(),
        abort: spec.abort.clone(),
    };
    // Installing or repairing the server has bounds of its own (stall, size); the model
    // timeout starts once the launch line is known.
    let line = match ends.or_end(Some(&spec.sink), spec.launcher.resolve()).await {
        Ok(Ok(line)) => Ok(line),
        Ok(Err(error)) => Err(Outcome::Failed(error)),
        Err(outcome) => Err(outcome),
    };
    // The first model segment runs from here: start-up and the first answer share its
    // bound.
    let segment_started = tokio::time::Instant::now();
    let started = match line {
        Err(outcome) => Err(outcome),
        Ok(line) => {
            let starting = tokio::time::timeout(
                spec.config.timeout,
                start(
                    &spec,
                    &line,
                    &mut resources,
                    events_tx,
                    calls_tx,
                    &close,
                    launch,
                ),
            );
            match ends.or_end(Some(&spec.sink), starting).await {
                Ok(Ok(Ok(()))) => Ok(()),
                Ok(Ok(Err(error))) => Err(Outcome::Failed(error)),
                Ok(Err(_elapsed)) => Err(Outcome::Failed(AdapterError::Timeout(
                    "starting the server session",
                ))),
                Err(outcome) => Err(outcome),
            }
        }
    };
    let TurnSpec {
        config,
        fingerprint,
        history,
        sink,
        registry,
        id,
        permit,
        ..
    } = spec;
    let mut turn = TurnLoop::new(
        driver::TurnLoopParts {
            events,
            ends,
            registry: registry.clone(),
            id,
            fingerprint,
            history,
            timeout: config.timeout,
            tool_timeout: config.tool_timeout,
            segment_started,
        },
        calls,
        sink,
    );
    let outcome = match started {
        Ok(()) => turn.run().await,
        Err(outcome) => outcome,
    };
    let (sink, mut events) = turn.finish(&outcome, config.shutdown_grace).await;
    resources
        .settle(&outcome, &mut events, config.shutdown_grace)
        .await;
    registry.withdraw(id);
    // DSH learns the outcome once the session is settled and the bridge closed; the
    // process group and the scratch directory go next, before the turn's slot is freed
    // (disposal awaits this task, so nothing outlives the provider).
    if let Some(sink) = sink {
        deliver_terminal(&sink, outcome, config.shutdown_grace).await;
    }
    resources.release(config.shutdown_grace).await;
    drop(permit);
}

/// Starts the bridge, the server and the session, then sends the prompt.
async fn start<L>(
    spec: &TurnSpec,
    line: &LaunchLine,
    resources: &mut TurnResources,
    events: mpsc::Sender<ServerEvent>,
    calls: mpsc::Sender<ParkedCall>,
    close: &CancellationToken,
    launch: L,
) -> Result<(), AdapterError>
where
    L: FnOnce(&LaunchLine, &Path) -> Result<ServerLink, AdapterError>,
{
    let scratch = ScratchDir::create(spec.config.scratch_root.as_deref())?;
    let cwd = scratch.path().to_path_buf();
    resources.scratch = Some(scratch);
    let mut mcp_servers = Vec::new();
    let mut identity = None;
    if let Some(catalog) = &spec.catalog {
        let bridge = Bridge::start(catalog.clone(), calls, close).await?;
        mcp_servers.push(bridge.descriptor());
        identity = Some(bridge.identity().clone());
        resources.bridge = Some(bridge);
    }
    let acp = match launch(line, &cwd)? {
        ServerLink::Process(launched) => {
            let (process, pipes) = *launched;
            resources.process = Some(process);
            AcpConnection::connect(pipes, identity, events.clone()).await?
        }
        #[cfg(test)]
        ServerLink::Streams(to_server, from_server) => {
            AcpConnection::connect_streams(to_server, from_server, identity, events.clone()).await?
        }
    };
    let sign_in = SignIn::new(spec.config.sign_in_timeout, &line.env);
    let session = open_session(acp.cx(), &cwd, mcp_servers, spec.model.as_deref(), sign_in).await;
    resources.acp = Some(acp);
    let session = session?;
    resources.session = Some(session.clone());
    let Some(acp) = &resources.acp else {
        return Err(AdapterError::ConnectionClosed("session/prompt"));
    };
    let cx = acp.cx().clone();
    let request = PromptRequest::new(session, spec.prompt.clone());
    resources.prompt_task = Some(AbortOnDropHandle::new(tokio::spawn(async move {
        let result = cx
            .send_request(request)
            .block_task()
            .await
            .map(|response| response.stop_reason)
            .map_err(|e| AdapterError::remote("session/prompt", &e));
        // The turn may already be tearing down; then nobody needs the answer.
        if events.send(ServerEvent::PromptDone(result)).await.is_err() {
            tracing::debug!("the prompt ended after its turn stopped listening");
        }
    })));
    Ok(())
}

impl TurnResources {
    /// Sends `session/cancel` and gives the server `grace` to answer the prompt (which
    /// also makes sure the notification left before the pipes close).
    async fn cancel_prompt(&self, events: &mut mpsc::Receiver<ServerEvent>, grace: Duration) {
        let (Some(acp), Some(session)) = (&self.acp, &self.session) else {
            return;
        };
        let cancel = CancelNotification::new(session.clone());
        if acp.cx().send_notification(cancel).is_err() {
            return;
        }
        let answered = tokio::time::timeout(grace, async {
            while let Some(event) = events.recv().await {
                if matches!(event, ServerEvent::PromptDone(_)) {
                    break;
                }
            }
        });
        if answered.await.is_err() {
            tracing::debug!("the server did not answer session/cancel in time");
        }
    }

    /// Ends the turn's conversation: cancels a running prompt (C49) and closes the bridge,
    /// which answers every parked call (C50).
    async fn settle(
        &mut self,
        outcome: &Outcome,
        events: &mut mpsc::Receiver<ServerEvent>,
        grace: Duration,
    ) {
        let prompt_running = self.prompt_task.as_ref().is_some_and(|t| !t.is_finished())
            && !matches!(outcome, Outcome::Finished(_));
        if prompt_running {
            self.cancel_prompt(events, grace).await;
        }
        events.close();
        if let Some(bridge) = self.bridge.take() {
            bridge.close().await;
        }
    }

    /// Releases what is left: closes the connection (the server's stdin), ends the process
    /// group, removes the scratch directory.
    async fn release(mut self, grace: Duration) {
        if let Some(acp) = self.acp.take() {
            acp.close(grace).await;
        }
        if let Some(process) = self.process.take() {
            process.shutdown(grace).await;
        }
        if let Some(task) = self.prompt_task.take() {
            task.abort();
            let _ended = task.await;
        }
        if let Some(scratch) = self.scratch.take() {
            scratch.remove();
        }
    }
}

/// Maps the server's stop reason to DSH's finish reason.
pub(crate) fn finish_reason(stop: StopReason) -> FinishReason {
    match stop {
        StopReason::MaxTokens => FinishReason::Length,
        StopReason::Refusal => FinishReason::Refusal,
        StopReason::Cancelled => FinishReason::Cancelled,
        _ => FinishReason::Stop,
    }
}

/// Sends the single terminal item, without waiting forever on a DSH that stopped reading.
async fn deliver_terminal(sink: &PartSender, outcome: Outcome, grace: Duration) {
    let delivered = match outcome {
        Outcome::Finished(reason) => timed(grace, sink.send(StreamPart::Finish { reason })).await,
        Outcome::Cancelled | Outcome::Superseded => {
            timed(
                grace,
                sink.send(StreamPart::Finish {
                    reason: FinishReason::Cancelled,
                }),
            )
            .await
        }
        Outcome::Failed(error) => timed(grace, sink.fail(error.to_llm_error())).await,
        Outcome::Disposed => timed(grace, sink.fail(AdapterError::Disposed.to_llm_error())).await,
        Outcome::DroppedByDsh => true,
    };
    if !delivered {
        tracing::debug!("DSH did not take the terminal part");
    }
}

async fn timed(grace: Duration, send: impl Future<Output = bool>) -> bool {
    tokio::time::timeout(grace, send).await.unwrap_or(false)
}

#[cfg(test)]
mod tests;
