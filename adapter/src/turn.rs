//! One turn: the server process it holds exclusively (checked out of the pool, the
//! no-tool lane's persistent client, or launched), its fresh ACP session, the private
//! bridge (when DSH offers tools) and the event loop that streams to DSH across tool
//! rounds. A turn owns everything it starts or checks out and lets go of all of it, in a
//! fixed order, however it ends: a clean end gives the process back, any other disposes
//! it. The crate's `concepts` page explains the words used here and draws the phases.

mod blocks;
mod driver;
mod ends;
mod event_queue;
mod exchange;
mod lane;
mod prompt;
mod resources;
mod slash_guard;
mod windows;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{ContentBlock, PromptRequest};
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

pub(crate) use exchange::{Claim, Continuation, ExchangeRegistry, SegmentHistory, fingerprint};
pub(crate) use lane::{LanePlace, NoToolLane};
pub(crate) use prompt::build_prompt;
pub(crate) use windows::{ContextWindows, WindowReport};

use crate::acp::{AgentProfile, ServerEvent, SignIn, choose_model};
use crate::bridge::{Bridge, ParkedCall, ToolCatalog};
use crate::config::AdapterConfig;
use crate::contract::{ChunkSender, FinishReason, StreamChunk};
use crate::error::AdapterError;
use crate::pool::{PoolKey, PooledProcess, ProcessPool, ServerLink, spawn_server};
use crate::server::{LaunchLine, ServerLauncher};
use driver::TurnLoop;
use ends::aborted;
use ends::{Outcome, TurnEnds};
use resources::{Home, TurnResources};

/// How many server events may wait for the turn before the server is held back.
const EVENT_CAPACITY: usize = 256;

/// Everything a fresh turn needs.
#[derive(Debug)]
pub(crate) struct TurnSpec {
    pub(crate) config: Arc<AdapterConfig>,
    /// Where the server comes from (shared by the provider's turns).
    pub(crate) launcher: Arc<ServerLauncher>,
    /// The provider's idle processes.
    pub(crate) pool: Arc<ProcessPool>,
    /// The server model to select; `None` keeps the server's default.
    pub(crate) model: Option<String>,
    pub(crate) prompt: Vec<ContentBlock>,
    pub(crate) catalog: Option<Arc<ToolCatalog>>,
    pub(crate) fingerprint: [u8; 32],
    pub(crate) history: SegmentHistory,
    pub(crate) sink: ChunkSender,
    pub(crate) abort: CancellationToken,
    /// The provider's token: cancelled on disposal.
    pub(crate) provider: CancellationToken,
    pub(crate) registry: Arc<ExchangeRegistry>,
    pub(crate) id: u64,
    /// A tool turn's active-turn slot (C41); requests without tools take none.
    pub(crate) permit: Option<OwnedSemaphorePermit>,
    /// Requests without tools: their place in the serialized lane (C42).
    pub(crate) lane: Option<LanePlace>,
    /// Where the context window the server reports is kept.
    pub(crate) window: WindowReport,
    /// DSH's `maxTokens` for the first generation (`None`: no cap).
    pub(crate) max_tokens: Option<u64>,
}

/// Runs a turn from start to teardown. Spawned on the provider's task tracker.
pub(crate) async fn run_turn(spec: TurnSpec) {
    run_turn_with(spec, spawn_server).await;
}

/// Runs a turn whose server, when no idle process can serve it, `launch` starts (in a
/// fresh private scratch root).
pub(crate) async fn run_turn_with<L>(mut spec: TurnSpec, launch: L)
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
    // A request without tools waits for the ones before it (C42).
    let lane = match spec.lane.take() {
        Some(place) => match ends.or_end(Some(&spec.sink), place.reached()).await {
            Ok(guard) => Ok(Some(guard)),
            Err(outcome) => Err(outcome),
        },
        None => Ok(None),
    };
    // Installing or repairing the server has bounds of its own (stall, size); the model
    // timeout starts once the launch line is known.
    let line = match lane {
        Err(outcome) => Err(outcome),
        Ok(guard) => {
            resources.lane = guard;
            match ends.or_end(Some(&spec.sink), spec.launcher.resolve()).await {
                Ok(Ok(line)) => Ok(line),
                Ok(Err(error)) => Err(Outcome::Failed(error)),
                Err(outcome) => Err(outcome),
            }
        }
    };
    // The first model segment runs from here: start-up and the first answer share its
    // bound.
    let segment_started = tokio::time::Instant::now();
    let started = match line {
        Err(outcome) => Err(outcome),
        Ok(line) => {
            let channels = Channels {
                events: events_tx,
                calls: calls_tx,
                close: &close,
            };
            let starting = tokio::time::timeout(
                spec.config.timeout,
                start(&spec, line, &mut resources, channels, launch),
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
    let confinement = resources
        .server
        .as_ref()
        .and_then(PooledProcess::confinement);
    let TurnSpec {
        config,
        fingerprint,
        history,
        sink,
        registry,
        id,
        permit,
        pool,
        window,
        max_tokens,
        ..
    } = spec;
    let mut turn = TurnLoop::new(
        driver::TurnLoopParts {
            events: event_queue::EventQueue::new(events),
            ends,
            registry: registry.clone(),
            id,
            fingerprint,
            history,
            timeout: config.timeout,
            tool_timeout: config.tool_timeout,
            segment_started,
            window,
            max_tokens,
            confinement,
        },
        calls,
        sink,
    );
    let outcome = match started {
        Ok(()) => turn.run().await,
        Err(outcome) => outcome,
    };
    let (sink, mut events, settled) = turn.finish(&outcome, config.shutdown_grace).await;
    resources
        .settle(&outcome, &mut events, config.shutdown_grace)
        .await;
    registry.withdraw(id);
    // Only a clean end (the prompt finished, nothing parked) gives the process back, and
    // it goes back before DSH learns the outcome, so DSH's next turn finds it idle. Any
    // other end disposes it, after DSH learned the outcome; the turn's slot is freed last
    // (disposal awaits this task, so nothing outlives the provider).
    let clean = settled && matches!(outcome, Outcome::Finished(_));
    if clean {
        resources.give_back(&pool, config.shutdown_grace).await;
    }
    if let Some(sink) = sink {
        deliver_terminal(&sink, outcome, config.shutdown_grace).await;
    }
    resources.release(config.shutdown_grace).await;
    drop(permit);
}

/// The channels a starting turn hands to its connection and bridge.
struct Channels<'a> {
    events: mpsc::Sender<ServerEvent>,
    calls: mpsc::Sender<ParkedCall>,
    close: &'a CancellationToken,
}

/// Gets a process (an idle one, the persistent client, or a new one), opens the turn's
/// session on it, and sends the prompt. A pooled process that turns out dead before any
/// prompt was sent is disposed and replaced, so the turn does not fail for it.
async fn start<L>(
    spec: &TurnSpec,
    line: LaunchLine,
    resources: &mut TurnResources,
    channels: Channels<'_>,
    launch: L,
) -> Result<(), AdapterError>
where
    L: FnOnce(&LaunchLine, &Path) -> Result<ServerLink, AdapterError>,
{
    let key = PoolKey { line };
    let mut launch = Some(launch);
    loop {
        let reused = match checkout(spec, &key, resources) {
            Some((server, home)) => {
                resources.server = Some(server);
                resources.home = home;
                true
            }
            None => {
                let Some(launch) = launch.take() else {
                    return Err(AdapterError::ConnectionClosed("session/new"));
                };
                resources.home = match resources.lane {
                    Some(_) => Home::Lane,
                    None => Home::Pool,
                };
                spec.pool.sweep_before_first_launch().await;
                // What starts is held in `resources` at every step, so however the start
                // ends, the turn's teardown disposes it.
                PooledProcess::launch(
                    key.clone(),
                    spec.config.scratch_root.as_deref(),
                    launch,
                    &mut resources.launching,
                )
                .await?;
                resources.server = resources.launching.ready.take();
                false
            }
        };
        // The process stays in `resources` while its session opens, so a start dropped at
        // its timeout leaves it to the turn's teardown, which disposes it in order.
        let opened = open(spec, resources, &channels).await;
        let alive = resources
            .server
            .as_mut()
            .is_some_and(|server| server.is_alive());
        let gone = opened.is_err() && reused && !alive;
        if !gone {
            return opened;
        }
        tracing::debug!("a pooled process was gone; starting another");
        resources.abandon_session().await;
        if let Some(server) = resources.server.take() {
            spec.pool.dispose_later(server);
        }
    }
}

/// An idle process for this turn: from the pool, or (for a request without tools) the
/// provider's persistent client.
fn checkout(
    spec: &TurnSpec,
    key: &PoolKey,
    resources: &mut TurnResources,
) -> Option<(PooledProcess, Home)> {
    if let Some(server) = spec.pool.checkout(key) {
        return Some((server, Home::Pool));
    }
    let slot = resources.lane.as_mut()?;
    let mut client = slot.take()?;
    let usable = client.key == *key
        && client.is_alive()
        && spec.pool.has_session_budget(&client)
        && !spec.pool.has_expired(&client);
    if usable {
        return Some((client, Home::Lane));
    }
    spec.pool.dispose_later(client);
    None
}

/// Opens the turn's session on `server`: a fresh `cwd`, the bridge (when DSH offers
/// tools), `session/new` (or the unclaimed discovery session, for a request without
/// tools), the model, then the prompt.
async fn open(
    spec: &TurnSpec,
    resources: &mut TurnResources,
    channels: &Channels<'_>,
) -> Result<(), AdapterError> {
    let mut mcp_servers = Vec::new();
    let mut identity = None;
    if let Some(catalog) = &spec.catalog {
        let bridge = Bridge::start(catalog.clone(), channels.calls.clone(), channels.close).await?;
        mcp_servers.push(bridge.descriptor());
        identity = Some(bridge.identity().clone());
        resources.bridge = Some(bridge);
    }
    let Some(server) = resources.server.as_mut() else {
        return Err(AdapterError::ConnectionClosed("session/new"));
    };
    let profile = AgentProfile::chosen(spec.config.agent_profile, server.info.profile);
    server
        .acp
        .attach(channels.events.clone(), identity, profile);
    let claimed = match spec.catalog {
        None => server.unclaimed.take(),
        Some(_) => None,
    };
    let session = match claimed {
        // The still-empty discovery session, claimed once (C24).
        Some(unclaimed) => {
            resources.session_dir = Some(unclaimed.cwd);
            unclaimed.session
        }
        None => {
            server.void_claim();
            let dir = server.session_dir()?;
            let cwd = dir.path().to_path_buf();
            resources.session_dir = Some(dir);
            let sign_in = SignIn::new(
                spec.config.sign_in_timeout,
                spec.config.auth_method,
                &server.key.line.env,
            );
            server
                .open_session(
                    &cwd,
                    mcp_servers,
                    &spec.config.extra_disabled_tools,
                    sign_in,
                )
                .await?
        }
    };
    server.acp.route_session(&session.session_id.to_string());
    resources.session = Some(session.session_id.clone());
    choose_model(server.acp.cx(), &session, spec.model.as_deref()).await?;
    let cx = server.acp.cx().clone();
    let events = channels.events.clone();
    let request = PromptRequest::new(session.session_id, spec.prompt.clone());
    resources.prompt_task = Some(AbortOnDropHandle::new(tokio::spawn(
        crate::diagnostics::counted(async move {
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
        }),
    )));
    Ok(())
}

/// DSH's terminal chunk for an outcome, if DSH still holds a stream to take it.
fn terminal_reason(outcome: Outcome) -> Option<FinishReason> {
    match outcome {
        Outcome::Finished(reason) => Some(reason),
        Outcome::Cancelled => Some(aborted("DSH aborted the generation")),
        Outcome::Superseded => Some(aborted(
            "a newer request replaced this tool exchange (changed context or tools)",
        )),
        Outcome::Failed(error) => Some(FinishReason::Error {
            failure: error.to_llm_error().to_failure(),
        }),
        Outcome::CapReached => Some(FinishReason::MaxTokens),
        Outcome::Disposed => Some(FinishReason::Error {
            failure: AdapterError::Disposed.to_llm_error().to_failure(),
        }),
        Outcome::DroppedByDsh => None,
    }
}

/// Sends the single terminal chunk, without waiting forever on a DSH that stopped reading.
async fn deliver_terminal(sink: &ChunkSender, outcome: Outcome, grace: Duration) {
    let Some(reason) = terminal_reason(outcome) else {
        return;
    };
    if !timed(grace, sink.send(StreamChunk::finish(reason))).await {
        tracing::debug!("DSH did not take the terminal chunk");
    }
}

async fn timed(grace: Duration, send: impl Future<Output = bool>) -> bool {
    tokio::time::timeout(grace, send).await.unwrap_or(false)
}

#[cfg(test)]
mod tests;
