//! `TurnResources`: what a turn holds while it runs (the process it checked out, the
//! session and its `cwd`, the bridge, the prompt task, the no-tool lane), and how it lets
//! go of them: settle the conversation (cancel a running prompt, close the bridge), then
//! either give the process back after a clean end (session closed when the server
//! supports it, handlers detached, `cwd` removed) or dispose it.

use std::time::Duration;

use agent_client_protocol::v1::schema::{CancelNotification, SessionId};
use tokio::sync::OwnedMutexGuard;
use tokio_util::task::AbortOnDropHandle;

use super::ends::Outcome;
use super::event_queue::EventQueue;
use crate::acp::{ServerEvent, close_session};
use crate::bridge::Bridge;
use crate::pool::{Holder, PooledProcess, ProcessPool};
use crate::server::ScratchDir;

/// Where a process goes back after a clean end.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) enum Home {
    /// The provider's pool.
    #[default]
    Pool,
    /// The no-tool lane's persistent client slot.
    Lane,
}

/// What a turn has started or checked out so far.
#[derive(Default)]
pub(super) struct TurnResources {
    /// The no-tool lane, held for the whole request (C42).
    pub(super) lane: Option<OwnedMutexGuard<Option<PooledProcess>>>,
    pub(super) server: Option<PooledProcess>,
    /// A process being launched (until it is connected and initialized).
    pub(super) launching: Holder,
    pub(super) home: Home,
    pub(super) session_dir: Option<ScratchDir>,
    pub(super) bridge: Option<Bridge>,
    pub(super) session: Option<SessionId>,
    /// The task awaiting `session/prompt`; aborted if the turn is dropped mid-way.
    pub(super) prompt_task: Option<AbortOnDropHandle<()>>,
}

impl TurnResources {
    /// Sends `session/cancel` and gives the server `grace` to answer the prompt (which
    /// also makes sure the notification left before the pipes close).
    async fn cancel_prompt(&self, events: &mut EventQueue, grace: Duration) {
        let (Some(server), Some(session)) = (&self.server, &self.session) else {
            return;
        };
        let cancel = CancelNotification::new(session.clone());
        if server.acp.cx().send_notification(cancel).is_err() {
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
    pub(super) async fn settle(
        &mut self,
        outcome: &Outcome,
        events: &mut EventQueue,
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

    /// Drops a session that was being opened on a process found dead (its bridge and
    /// `cwd` go; the process is disposed by the caller).
    pub(super) async fn abandon_session(&mut self) {
        if let Some(bridge) = self.bridge.take() {
            bridge.close().await;
        }
        if let Some(dir) = self.session_dir.take() {
            dir.remove();
        }
        self.session = None;
    }

    /// After a clean end: leaves the session behind (closed with `session/close` when
    /// the server advertises it, never resumed: C25, C37), detaches the turn's handlers,
    /// removes the session's `cwd`, and returns the process to its home.
    pub(super) async fn give_back(&mut self, pool: &std::sync::Arc<ProcessPool>, grace: Duration) {
        let Some(mut server) = self.server.take() else {
            return;
        };
        server.acp.detach();
        server.idle_since = tokio::time::Instant::now();
        if let Some(task) = self.prompt_task.take() {
            task.abort();
            let _ended = task.await;
        }
        let closed = match self.session.take() {
            Some(session) => {
                tokio::time::timeout(grace, close_session(server.acp.cx(), server.info, session))
                    .await
                    .is_ok_and(|closed| closed.is_ok())
            }
            None => true,
        };
        if let Some(dir) = self.session_dir.take() {
            dir.remove();
        }
        if !closed {
            pool.dispose_later(server);
            return;
        }
        match (self.home, self.lane.as_mut()) {
            (Home::Lane, Some(slot)) if pool.has_session_budget(&server) => {
                **slot = Some(server);
            }
            (Home::Lane, _) => pool.dispose_later(server),
            (Home::Pool, _) => pool.checkin(server),
        }
    }

    /// Releases what is left after an unclean end: the session's `cwd`, then the process
    /// (connection, process group, scratch root), awaited; then the no-tool lane.
    pub(super) async fn release(mut self, grace: Duration) {
        if let Some(dir) = self.session_dir.take() {
            dir.remove();
        }
        if let Some(server) = self.server.take() {
            server.acp.detach();
            server.dispose(grace).await;
        }
        self.launching.dispose(grace).await;
        if let Some(task) = self.prompt_task.take() {
            task.abort();
            let _ended = task.await;
        }
        drop(self.lane.take());
    }
}
