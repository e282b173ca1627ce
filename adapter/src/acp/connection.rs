//! `AcpConnection`: the official SDK's client connection over the server's stdio (or any
//! pair of byte streams). A pooled process serves one turn after another, so the
//! connection routes to whichever turn is attached: that turn's session updates flow into
//! its bounded event channel (a full channel holds the server back rather than dropping
//! anything), and permission requests are answered at once by the permission policy for
//! its bridge and agent profile (the turn's tracker remembers what it refused, C21). Updates of any other session, or while no turn is attached, are dropped.
//! fs and terminal requests are refused by the SDK, since the client advertises neither.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    RequestPermissionRequest, RequestPermissionResponse, SessionNotification,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Agent, ByteStreams, Client, on_receive_notification, on_receive_request,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use tokio_util::task::AbortOnDropHandle;

use super::agent_profile::AgentProfile;
use super::events::{ServerEvent, UpdateTracker};
use super::permission;
use crate::bridge::BridgeIdentity;
use crate::config::ADAPTER_ID;
use crate::error::AdapterError;
use crate::server::ServerPipes;

/// The turn a connection currently serves.
#[derive(Debug)]
struct Route {
    session: Option<String>,
    tracker: UpdateTracker,
    events: mpsc::Sender<ServerEvent>,
}

/// Where the connection's updates and permission requests go (shared with its handlers).
#[derive(Debug, Clone, Default)]
struct Router {
    route: Arc<Mutex<Option<Route>>>,
}

impl Router {
    fn with<T>(&self, f: impl FnOnce(&mut Option<Route>) -> T) -> T {
        match self.route.lock() {
            Ok(mut guard) => f(&mut guard),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }
}

/// A live ACP connection and the task that drives it.
#[derive(Debug)]
pub(crate) struct AcpConnection {
    cx: ConnectionTo<Agent>,
    router: Router,
    stop: Option<oneshot::Sender<()>>,
    /// Aborted on drop, so a dropped connection never outlives its turn.
    driver: AbortOnDropHandle<Result<(), agent_client_protocol::Error>>,
}

impl AcpConnection {
    /// Connects over the server's pipes.
    pub(crate) async fn connect(pipes: ServerPipes) -> Result<Self, AdapterError> {
        Self::connect_streams(pipes.stdin, pipes.stdout).await
    }

    /// Connects over any pair of byte streams: `to_server` carries our frames,
    /// `from_server` the server's. The turn passes the server's stdio; tests pass an
    /// in-process duplex to the fake.
    pub(crate) async fn connect_streams<W, R>(
        to_server: W,
        from_server: R,
    ) -> Result<Self, AdapterError>
    where
        W: AsyncWrite + Send + Unpin + 'static,
        R: AsyncRead + Send + Unpin + 'static,
    {
        let transport = ByteStreams::new(to_server.compat_write(), from_server.compat());
        let router = Router::default();
        let updates = router.clone();
        let permissions = router.clone();
        let builder = Client
            .v1()
            .name(ADAPTER_ID)
            .on_receive_notification(
                async move |notification: SessionNotification, _cx| {
                    let session = notification.session_id.to_string();
                    let routed = updates.with(|route| {
                        let route = route.as_mut()?;
                        if route.session.as_ref().is_some_and(|s| *s != session) {
                            return None;
                        }
                        let event = route.tracker.map(notification.update)?;
                        Some((route.events.clone(), event))
                    });
                    // A closed channel means the turn is tearing down.
                    if let Some((events, event)) = routed
                        && events.send(event).await.is_err()
                    {
                        tracing::debug!("dropped a session update after the turn ended");
                    }
                    Ok(())
                },
                on_receive_notification!(),
            )
            .on_receive_request(
                async move |request: RequestPermissionRequest,
                            responder: Responder<RequestPermissionResponse>,
                            _cx| {
                    // Only the attached turn's own session asks for its bridge's tools: a
                    // late request of a finished turn's session (or of any other) finds no
                    // bridge, and is cancelled (C33), even while the next turn is attached.
                    let session = request.session_id.to_string();
                    let answer = permissions.with(|route| {
                        route
                            .as_mut()
                            .filter(|r| r.session.as_deref() == Some(session.as_str()))
                            .map(|r| r.tracker.answer_permission(&request))
                    });
                    responder.respond(answer.unwrap_or_else(|| {
                        permission::answer(&request, None, AgentProfile::default())
                    }))
                },
                on_receive_request!(),
            );
        let (cx_sender, cx_receiver) = oneshot::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let driver = tokio::spawn(crate::diagnostics::counted(builder.connect_with(
            transport,
            async move |cx| {
                if cx_sender.send(cx).is_err() {
                    return Ok(());
                }
                // Either the turn says stop, or it went away: both mean close.
                let _stop_or_gone = stopped.await;
                Ok(())
            },
        )));
        let driver = AbortOnDropHandle::new(driver);
        let cx = cx_receiver
            .await
            .map_err(|_| AdapterError::ConnectionClosed("connect"))?;
        Ok(Self {
            cx,
            router,
            stop: Some(stop),
            driver,
        })
    }

    /// Routes updates (of any session until [`Self::route_session`] names one) and
    /// permission requests to a turn: its events channel, its bridge and the agent
    /// profile its bridge calls are named by.
    pub(crate) fn attach(
        &self,
        events: mpsc::Sender<ServerEvent>,
        bridge: Option<BridgeIdentity>,
        profile: AgentProfile,
    ) {
        self.router.with(|route| {
            *route = Some(Route {
                session: None,
                tracker: UpdateTracker::new(bridge, profile),
                events,
            });
        });
    }

    /// Narrows the attached turn to the updates of `session`.
    pub(crate) fn route_session(&self, session: &str) {
        self.router.with(|route| {
            if let Some(route) = route.as_mut() {
                route.session = Some(session.to_owned());
            }
        });
    }

    /// Detaches the turn: its handlers get nothing more from this connection (C33).
    pub(crate) fn detach(&self) {
        self.router.with(|route| *route = None);
    }

    /// Whether the connection still runs (the server has not closed it).
    pub(crate) fn is_open(&self) -> bool {
        !self.driver.is_finished()
    }

    /// The connection, for sending requests.
    pub(crate) fn cx(&self) -> &ConnectionTo<Agent> {
        &self.cx
    }

    /// Closes the connection (and with it the server's stdin).
    pub(crate) async fn close(mut self, grace: Duration) {
        if let Some(stop) = self.stop.take() {
            // The driver may already be gone; then there is nothing to stop.
            let _already_gone = stop.send(());
        }
        let mut driver = self.driver;
        match tokio::time::timeout(grace, &mut driver).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(error))) => {
                tracing::debug!(
                    code = error.code.value(),
                    "the ACP connection ended with an error"
                );
            }
            Ok(Err(_join)) => tracing::warn!("the ACP connection task failed"),
            Err(_elapsed) => {
                driver.abort();
                let _aborted = driver.await;
            }
        }
    }
}
