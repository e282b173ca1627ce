//! `PooledProcess`: one managed server process that can serve several turns one after
//! another: its ACP connection (initialized once), its private scratch root (each
//! session gets a fresh, empty `cwd` inside it), how many sessions it has created, and
//! the discovery session nobody has claimed yet, and the ledger of the sessions it opened,
//! whose files in the server's home go when the process does (B08).

use std::path::Path;
use std::time::Duration;

use agent_client_protocol::v1::schema::{McpServer, NewSessionResponse};

use super::PoolKey;
use super::ServerLink;
use crate::acp::{AcpConnection, ServerInfo, SignIn, initialize, new_session};
use crate::error::AdapterError;
use crate::server::{ConversationLedger, Enforcement, LaunchLine, ManagedProcess, ScratchDir};

/// The still-empty session a discovery process opened (C24): no MCP endpoint, never
/// prompted, with its own `cwd`.
#[derive(Debug)]
pub(crate) struct UnclaimedSession {
    pub(crate) session: NewSessionResponse,
    pub(crate) cwd: ScratchDir,
}

/// Whatever a launch started so far: a process still connecting, or a connected one.
#[derive(Debug, Default)]
pub(crate) struct Holder {
    spawning: Option<Spawning>,
    /// The connected process (initialized once `launch` returned `Ok`).
    pub(crate) ready: Option<PooledProcess>,
}

impl Holder {
    /// Ends whatever is held.
    pub(crate) async fn dispose(&mut self, grace: Duration) {
        if let Some(Spawning {
            process,
            root,
            ledger,
        }) = self.spawning.take()
        {
            if let Some(process) = process {
                process.shutdown(grace).await;
            }
            if let Some(ledger) = ledger {
                ledger.remove_all(root.path());
            }
            root.remove();
        }
        if let Some(ready) = self.ready.take() {
            ready.dispose(grace).await;
        }
    }
}

/// A process being connected: what a launch started, in the order it is let go of.
#[derive(Debug)]
struct Spawning {
    process: Option<ManagedProcess>,
    root: ScratchDir,
    ledger: Option<ConversationLedger>,
}

/// A live, initialized server process.
#[derive(Debug)]
pub(crate) struct PooledProcess {
    pub(crate) key: PoolKey,
    /// `None` when the server is not a subprocess (the driver tests' in-process fake).
    process: Option<ManagedProcess>,
    pub(crate) acp: AcpConnection,
    pub(crate) info: ServerInfo,
    root: ScratchDir,
    /// The sessions it opened, whose files go with it (B08).
    ledger: Option<ConversationLedger>,
    /// How many sessions it created (C39).
    pub(crate) sessions: usize,
    /// The discovery session, while its claim holds (C45).
    pub(crate) unclaimed: Option<UnclaimedSession>,
    /// When it last became idle.
    pub(crate) idle_since: tokio::time::Instant,
}

impl PooledProcess {
    /// Starts a server with `launch` in a fresh private scratch root under `scratch`,
    /// connects, and sends `initialize`. What it started is always in `holder` (so whoever
    /// owns `holder` disposes it with [`Holder::dispose`], even if this future is dropped
    /// mid-way).
    pub(crate) async fn launch<L>(
        key: PoolKey,
        scratch: Option<&Path>,
        launch: L,
        holder: &mut Holder,
    ) -> Result<(), AdapterError>
    where
        L: FnOnce(&LaunchLine, &Path) -> Result<ServerLink, AdapterError>,
    {
        let root = ScratchDir::create(scratch)?;
        let ledger = ConversationLedger::start(root.path(), &key.line.env);
        let connected = match launch(&key.line, root.path()) {
            Err(error) => {
                if let Some(ledger) = ledger {
                    ledger.remove_all(root.path());
                }
                root.remove();
                return Err(error);
            }
            Ok(ServerLink::Process(launched)) => {
                let (process, pipes) = *launched;
                holder.spawning = Some(Spawning {
                    process: Some(process),
                    root,
                    ledger,
                });
                AcpConnection::connect(pipes).await
            }
            #[cfg(test)]
            Ok(ServerLink::Streams(to_server, from_server)) => {
                holder.spawning = Some(Spawning {
                    process: None,
                    root,
                    ledger,
                });
                AcpConnection::connect_streams(to_server, from_server).await
            }
        };
        let acp = connected?;
        let Some(Spawning {
            process,
            root,
            ledger,
        }) = holder.spawning.take()
        else {
            return Err(AdapterError::ConnectionClosed("initialize"));
        };
        let started = holder.ready.insert(Self {
            key,
            process,
            acp,
            info: ServerInfo {
                offered: crate::acp::OfferedMethods::default(),
                closes_sessions: false,
                profile: crate::acp::AgentProfile::default(),
            },
            root,
            ledger,
            sessions: 0,
            unclaimed: None,
            idle_since: tokio::time::Instant::now(),
        });
        started.info = initialize(started.acp.cx()).await.map_err(|error| {
            match (error, started.confinement()) {
                (
                    AdapterError::ConnectionClosed(method),
                    Some(confinement @ (Enforcement::Confined { .. } | Enforcement::Seatbelt)),
                ) => AdapterError::ClosedWhileConfined {
                    method,
                    confinement,
                },
                (error, _) => error,
            }
        })?;
        Ok(())
    }

    /// A fresh, empty, private directory for one session's `cwd`.
    pub(crate) fn session_dir(&self) -> Result<ScratchDir, AdapterError> {
        ScratchDir::create(Some(self.root.path()))
    }

    /// Opens a session in `cwd` (see [`new_session`]), counted against the process's
    /// budget (C39) and recorded in its ledger, so its files go with the process (B08).
    pub(crate) async fn open_session(
        &mut self,
        cwd: &Path,
        mcp_servers: Vec<McpServer>,
        extra_disabled_tools: &[String],
        sign_in: SignIn,
    ) -> Result<NewSessionResponse, AdapterError> {
        self.sessions += 1;
        if let Some(ledger) = self.ledger.as_mut() {
            ledger.opening();
        }
        let opened = new_session(
            self.acp.cx(),
            self.info,
            cwd,
            mcp_servers,
            extra_disabled_tools,
            sign_in,
        )
        .await;
        if let Some(ledger) = self.ledger.as_mut() {
            let id = opened.as_ref().ok().map(|s| s.session_id.to_string());
            ledger.opened(id.as_deref());
        }
        opened
    }

    /// How the kernel confines the server (`None`: not a subprocess).
    pub(crate) fn confinement(&self) -> Option<crate::server::Enforcement> {
        self.process.as_ref().map(ManagedProcess::confinement)
    }

    /// Alive and connected (the server did not exit or close its side).
    pub(crate) fn is_alive(&mut self) -> bool {
        self.acp.is_open()
            && !self
                .process
                .as_mut()
                .is_some_and(ManagedProcess::has_exited)
    }

    /// Voids the discovery claim (another session is being created, C45).
    pub(crate) fn void_claim(&mut self) {
        if let Some(unclaimed) = self.unclaimed.take() {
            unclaimed.cwd.remove();
        }
    }

    /// Ends it: closes the connection (its stdin), ends the process group, removes the
    /// files the server kept for its sessions (B08: only now, with the server gone, so its
    /// open SQLite files are never pulled from under it), then the scratch root and every
    /// session directory in it.
    pub(crate) async fn dispose(mut self, grace: Duration) {
        self.void_claim();
        self.acp.close(grace).await;
        if let Some(process) = self.process.take() {
            process.shutdown(grace).await;
        }
        if let Some(ledger) = self.ledger.take() {
            ledger.remove_all(self.root.path());
        }
        self.root.remove();
    }
}
