//! The sessions of one fake process: cwd, MCP servers (and their lazy connections),
//! model and mode, the built-in tools the client disabled, the text history
//! `session/load` replays, and the cancellation tokens of the prompts running in each
//! session.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

use crate::mcp::client::McpPool;
use crate::state::mcp_servers::McpServerEntry;
use crate::state::session_config::SessionConfig;

/// One finished prompt turn, as `session/load` replays it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnRecord {
    /// The prompt's text.
    pub user_text: String,
    /// Everything the agent said (its message chunks, concatenated).
    pub agent_text: String,
}

/// One session.
#[derive(Debug)]
pub struct Session {
    /// The session's working directory.
    pub cwd: String,
    /// The MCP servers given when the session was opened (or last loaded/resumed).
    pub mcp_servers: Vec<McpServerEntry>,
    /// Lazy connections to the `http` ones.
    pub mcp: Arc<McpPool>,
    /// Model and mode.
    pub config: SessionConfig,
    /// The built-in tools the client disabled (`_meta.agy.disabledTools` of the last
    /// `session/new`, `session/load` or `session/resume`).
    pub disabled_tools: Vec<String>,
    /// Finished turns.
    pub history: Vec<TurnRecord>,
    running_prompts: HashMap<u64, CancellationToken>,
}

impl Session {
    /// A session with no history, no running prompt and no tool disabled.
    pub fn new(
        cwd: String,
        mcp_servers: Vec<McpServerEntry>,
        mcp: McpPool,
        config: SessionConfig,
    ) -> Self {
        Self {
            cwd,
            mcp_servers,
            mcp: Arc::new(mcp),
            config,
            disabled_tools: Vec::new(),
            history: Vec::new(),
            running_prompts: HashMap::new(),
        }
    }
}

/// A prompt registered as running in a session; cancel it through the store.
#[derive(Debug, Clone)]
pub struct RunningPrompt {
    /// The prompt's number in this process.
    pub number: u64,
    /// Cancelled by `session/cancel`.
    pub cancelled: CancellationToken,
}

/// Every session of the process.
#[derive(Debug, Default)]
pub struct SessionStore {
    sessions: Mutex<HashMap<String, Session>>,
    prompt_numbers: AtomicU64,
    /// The session of the latest prompt (`session_new.late_permission` asks for its turn).
    last_prompted: Mutex<Option<String>>,
}

/// `mutex` locked, even if a panicking holder poisoned it (the data stays usable).
fn unpoisoned<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl SessionStore {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Session>> {
        unpoisoned(&self.sessions)
    }

    /// Adds (or replaces) a session.
    pub fn insert(&self, id: String, session: Session) {
        self.lock().insert(id, session);
    }

    /// Whether the session exists.
    pub fn contains(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    /// Runs `f` on the session, if it exists.
    pub fn with<T>(&self, id: &str, f: impl FnOnce(&mut Session) -> T) -> Option<T> {
        self.lock().get_mut(id).map(f)
    }

    /// Removes a session, cancelling its running prompts.
    pub fn remove(&self, id: &str) {
        if let Some(session) = self.lock().remove(id) {
            for token in session.running_prompts.values() {
                token.cancel();
            }
        }
    }

    /// Registers a running prompt in the session.
    pub fn begin_prompt(&self, id: &str) -> Option<RunningPrompt> {
        let number = self.prompt_numbers.fetch_add(1, Ordering::Relaxed);
        let running = self.with(id, |session| {
            let cancelled = CancellationToken::new();
            session.running_prompts.insert(number, cancelled.clone());
            RunningPrompt { number, cancelled }
        });
        if running.is_some() {
            *unpoisoned(&self.last_prompted) = Some(id.to_owned());
        }
        running
    }

    /// The session of the latest prompt of this process, if any.
    pub fn last_prompted(&self) -> Option<String> {
        unpoisoned(&self.last_prompted).clone()
    }

    /// Unregisters a prompt and records its turn in the history.
    pub fn end_prompt(&self, id: &str, prompt: &RunningPrompt, record: TurnRecord) {
        self.with(id, |session| {
            session.running_prompts.remove(&prompt.number);
            session.history.push(record);
        });
    }

    /// Cancels every running prompt of the session; returns how many.
    pub fn cancel_prompts(&self, id: &str) -> usize {
        self.with(id, |session| {
            for token in session.running_prompts.values() {
                token.cancel();
            }
            session.running_prompts.len()
        })
        .unwrap_or(0)
    }
}
