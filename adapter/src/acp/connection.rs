//! `AcpConnection`: the official SDK's client connection over the server's stdio (or any
//! pair of byte streams). Session
//! updates flow into the turn's bounded event channel (a full channel holds the server
//! back rather than dropping anything); permission requests are answered at once by the
//! permission policy; fs and terminal requests are refused by the SDK, since the client
//! advertises neither.

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

use super::events::{ServerEvent, UpdateTracker};
use super::permission;
use crate::bridge::BridgeIdentity;
use crate::error::AdapterError;
use crate::register::ADAPTER_ID;
use crate::server::ServerPipes;

/// A live ACP connection and the task that drives it.
#[derive(Debug)]
pub(crate) struct AcpConnection {
    cx: ConnectionTo<Agent>,
    stop: Option<oneshot::Sender<()>>,
    /// Aborted on drop, so a dropped connection never outlives its turn.
    driver: AbortOnDropHandle<Result<(), agent_client_protocol::Error>>,
}

impl AcpConnection {
    /// Connects over the server's pipes.
    pub(crate) async fn connect(
        pipes: ServerPipes,
        bridge: Option<BridgeIdentity>,
        events: mpsc::Sender<ServerEvent>,
    ) -> Result<Self, AdapterError> {
        Self::connect_streams(pipes.stdin, pipes.stdout, bridge, events).await
    }

    /// Connects over any pair of byte streams: `to_server` carries our frames,
    /// `from_server` the server's. The turn passes the server's stdio; tests pass an
    /// in-process duplex to the fake.
    pub(crate) async fn connect_streams<W, R>(
        to_server: W,
        from_server: R,
        bridge: Option<BridgeIdentity>,
        events: mpsc::Sender<ServerEvent>,
    ) -> Result<Self, AdapterError>
    where
        W: AsyncWrite + Send + Unpin + 'static,
        R: AsyncRead + Send + Unpin + 'static,
    {
        let transport = ByteStreams::new(to_server.compat_write(), from_server.compat());
        let mut tracker = UpdateTracker::new(bridge.clone());
        let builder = Client
            .v1()
            .name(ADAPTER_ID)
            .on_receive_notification(
                async move |notification: SessionNotification, _cx| {
                    if let Some(event) = tracker.map(notification.update) {
                        // A closed channel means the turn is tearing down.
                        if events.send(event).await.is_err() {
                            tracing::debug!("dropped a session update after the turn ended");
                        }
                    }
                    Ok(())
                },
                on_receive_notification!(),
            )
            .on_receive_request(
                async move |request: RequestPermissionRequest,
                            responder: Responder<RequestPermissionResponse>,
                            _cx| {
                    responder.respond(permission::answer(&request, bridge.as_ref()))
                },
                on_receive_request!(),
            );
        let (cx_sender, cx_receiver) = oneshot::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let driver = tokio::spawn(builder.connect_with(transport, async move |cx| {
            if cx_sender.send(cx).is_err() {
                return Ok(());
            }
            // Either the turn says stop, or it went away: both mean close.
            let _stop_or_gone = stopped.await;
            Ok(())
        }));
        let driver = AbortOnDropHandle::new(driver);
        let cx = cx_receiver
            .await
            .map_err(|_| AdapterError::ConnectionClosed("connect"))?;
        Ok(Self {
            cx,
            stop: Some(stop),
            driver,
        })
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
