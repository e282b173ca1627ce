//! [`Probe`]: one server process started for a user command exactly as the adapter starts
//! one for a turn (the launch line the [`ServerLauncher`] resolves, installing or repairing
//! the pinned build as a launch does, confined as configured, in a private scratch folder,
//! with the allowlisted environment, and a ledger of the sessions it opens), then
//! `initialize`d. Unlike a turn it keeps the whole `initialize` answer (every sign-in
//! method advertised, and whether `logout` is), and it never signs in by itself: `doctor`
//! and `status` open a session to see whether one is needed, `login` authenticates with
//! the method the user names, `logout` logs out. [`Probe::dispose`] ends it the way a pooled
//! process ends: the connection, the process tree, the files the server kept for the
//! sessions it opened (B08), the scratch folder.

use std::path::PathBuf;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    AuthenticateRequest, InitializeResponse, LogoutRequest, NewSessionRequest,
};
use agent_client_protocol::{Error as RemoteError, ErrorCode};
use tokio::sync::watch;

use crate::acp::{AcpConnection, initialize_answer};
use crate::config::AdapterConfig;
use crate::contract::LlmError;
use crate::error::AdapterError;
use crate::server::{
    ConversationLedger, ManagedProcess, ScratchDir, ServerLauncher, ServerPipes, server_home,
};

/// How long starting the server and its `initialize` may take (1.3.0: about 3 s).
const START_BOUND: Duration = Duration::from_secs(60);
/// How long a `session/new` or a `logout` may take (1.3.0: about 5 s for a session).
const REQUEST_BOUND: Duration = Duration::from_secs(60);

/// What a `session/new` without a sign-in came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SessionOutcome {
    /// A session opened: the server is signed in.
    Opened,
    /// The server answered "authentication required".
    SignInNeeded,
}

/// A started, initialized server (see the module doc).
#[derive(Debug)]
pub(crate) struct Probe {
    acp: Option<AcpConnection>,
    process: Option<ManagedProcess>,
    root: Option<ScratchDir>,
    /// The sessions' folders, inside `root`.
    session_dirs: Vec<ScratchDir>,
    ledger: Option<ConversationLedger>,
    init: Option<InitializeResponse>,
    home: Option<PathBuf>,
    grace: Duration,
}

impl Probe {
    /// Starts the server `config` names and sends `initialize`. A failure (the install,
    /// confinement, the spawn, the handshake, or no answer within a minute) is the
    /// adapter's error, and leaves nothing behind.
    pub(crate) async fn start(config: &AdapterConfig) -> Result<Self, LlmError> {
        let line = ServerLauncher::new(config)
            .resolve()
            .await
            .map_err(|e| e.to_llm_error())?;
        let root =
            ScratchDir::create(config.scratch_root.as_deref()).map_err(|e| e.to_llm_error())?;
        let ledger = ConversationLedger::start(root.path(), &line.env);
        let (process, pipes) = match ManagedProcess::spawn(&line, root.path()) {
            Ok(spawned) => spawned,
            Err(error) => {
                if let Some(ledger) = ledger {
                    ledger.remove_all(root.path());
                }
                root.remove();
                return Err(error.to_llm_error());
            }
        };
        let mut probe = Self {
            acp: None,
            process: Some(process),
            root: Some(root),
            session_dirs: Vec::new(),
            ledger,
            init: None,
            home: server_home(&line.env),
            grace: config.shutdown_grace,
        };
        let started = tokio::time::timeout(START_BOUND, probe.initialize(pipes))
            .await
            .unwrap_or(Err(AdapterError::Timeout("starting the server")));
        match started {
            Ok(()) => Ok(probe),
            Err(error) => {
                probe.dispose().await;
                Err(error.to_llm_error())
            }
        }
    }

    async fn initialize(&mut self, pipes: ServerPipes) -> Result<(), AdapterError> {
        let acp = self.acp.insert(AcpConnection::connect(pipes).await?);
        let answer = initialize_answer(acp.cx()).await?;
        self.init = Some(answer);
        Ok(())
    }

    fn connection(&self) -> Result<&AcpConnection, AdapterError> {
        self.acp
            .as_ref()
            .ok_or(AdapterError::ConnectionClosed("initialize"))
    }

    /// The sign-in method ids `initialize` advertised, in its order.
    pub(crate) fn methods(&self) -> Vec<String> {
        self.init
            .iter()
            .flat_map(|init| &init.auth_methods)
            .map(|method| method.id().to_string())
            .collect()
    }

    /// Whether `initialize` advertised `logout` (`agentCapabilities.auth.logout`).
    pub(crate) fn logs_out(&self) -> bool {
        self.init
            .as_ref()
            .is_some_and(|init| init.agent_capabilities.auth.logout.is_some())
    }

    /// The server's home (where its `settings.json` is), from its environment.
    pub(crate) fn home(&self) -> Option<&std::path::Path> {
        self.home.as_deref()
    }

    /// Changes whenever the server writes to stderr ([`ManagedProcess::stderr_updates`]).
    pub(crate) fn stderr_updates(&self) -> Option<watch::Receiver<()>> {
        self.process.as_ref().map(ManagedProcess::stderr_updates)
    }

    /// The text after `marker` on the server's last complete stderr line holding it.
    pub(crate) fn stderr_line_after(&self, marker: &str) -> Option<String> {
        self.process.as_ref()?.stderr_line_after(marker)
    }

    /// Opens a session (no MCP server, never prompted) in a fresh folder of its own, and
    /// records it in the ledger, so its files go at disposal. Never signs in.
    pub(crate) async fn open_session(&mut self) -> Result<SessionOutcome, LlmError> {
        let opened = tokio::time::timeout(REQUEST_BOUND, self.new_session())
            .await
            .unwrap_or(Err(AdapterError::Timeout("session/new")));
        opened.map_err(|e| e.to_llm_error())
    }

    async fn new_session(&mut self) -> Result<SessionOutcome, AdapterError> {
        let root = self
            .root
            .as_ref()
            .ok_or(AdapterError::ConnectionClosed("session/new"))?;
        let dir = ScratchDir::create(Some(root.path()))?;
        let cwd = dir.path().to_path_buf();
        self.session_dirs.push(dir);
        if let Some(ledger) = self.ledger.as_mut() {
            ledger.opening();
        }
        let answer = self
            .connection()?
            .cx()
            .send_request(NewSessionRequest::new(cwd))
            .block_task()
            .await;
        if let Some(ledger) = self.ledger.as_mut() {
            let id = answer.as_ref().ok().map(|s| s.session_id.to_string());
            ledger.opened(id.as_deref());
        }
        match answer {
            Ok(_) => Ok(SessionOutcome::Opened),
            Err(error) if error.code == ErrorCode::AUTH_REQUIRED => {
                Ok(SessionOutcome::SignInNeeded)
            }
            Err(error) => Err(AdapterError::remote("session/new", &error)),
        }
    }

    /// Sends `authenticate` with `method` and waits for its answer, unbounded (the caller
    /// bounds it: a browser sign-in takes as long as the user does). The server's own
    /// error, for the caller to map.
    pub(crate) async fn authenticate(&self, method: &str) -> Result<(), RemoteError> {
        let acp = self.acp.as_ref().ok_or_else(RemoteError::internal_error)?;
        acp.cx()
            .send_request(AuthenticateRequest::new(method.to_owned()))
            .block_task()
            .await
            .map(|_| ())
    }

    /// Sends `logout` (the caller checked [`Self::logs_out`]).
    pub(crate) async fn logout(&self) -> Result<(), LlmError> {
        let sent = async {
            self.connection()?
                .cx()
                .send_request(LogoutRequest::new())
                .block_task()
                .await
                .map_err(|e| AdapterError::remote("logout", &e))
        };
        tokio::time::timeout(REQUEST_BOUND, sent)
            .await
            .unwrap_or(Err(AdapterError::Timeout("logout")))
            .map(|_| ())
            .map_err(|e| e.to_llm_error())
    }

    /// Ends it: the connection (the server's stdin), the process tree, the files the
    /// server kept for the sessions opened (only now, with the server gone), the scratch
    /// folder.
    pub(crate) async fn dispose(mut self) {
        if let Some(acp) = self.acp.take() {
            acp.close(self.grace).await;
        }
        if let Some(process) = self.process.take() {
            process.shutdown(self.grace).await;
        }
        if let (Some(ledger), Some(root)) = (self.ledger.take(), self.root.as_ref()) {
            ledger.remove_all(root.path());
        }
        for dir in self.session_dirs.drain(..) {
            dir.remove();
        }
        if let Some(root) = self.root.take() {
            root.remove();
        }
    }
}
