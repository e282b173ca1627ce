//! The journal: what the fake saw and did, as JSON Lines on disk plus an in-memory copy.
//!
//! Owns the entry shapes ([`JournalEntry`]), the append-only writer ([`Journal`]) and the
//! reader ([`read_journal`]). API keys are recorded only by their shape ([`ApiKeyShape`]).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::watch;

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JournalEntry {
    /// A request as received.
    Request(RequestEntry),
    /// A scripted response about to be sent.
    Response {
        /// The request's sequence number.
        seq: u64,
        /// The turn played (none for the default echo).
        turn: Option<usize>,
        /// The segment of the turn played.
        segment: usize,
        /// Short descriptions of the steps played.
        steps: Vec<String>,
        /// The function names called.
        function_calls: Vec<String>,
    },
    /// A side request (JSON output) answered with a minimal instance of its schema.
    Utility {
        /// The request's sequence number.
        seq: u64,
        /// The model it named.
        model: String,
    },
    /// A `native` step skipped because the agent did not declare the function.
    NativeWithheld {
        /// The request's sequence number.
        seq: u64,
        /// The undeclared function name.
        name: String,
    },
    /// A scripted expectation that did not hold.
    ExpectationFailed {
        /// The request's sequence number.
        seq: u64,
        /// The turn's index.
        turn: usize,
        /// The step's index in the turn.
        step: usize,
        /// What did not hold.
        reason: String,
    },
    /// A request the script does not cover, or a script failure; answered with HTTP 400.
    Unscripted {
        /// The request's sequence number.
        seq: u64,
        /// Why (the same text as the error body's message).
        reason: String,
    },
    /// The agent dropped a request held open by `wait_for_cancel`.
    Cancelled {
        /// The request's sequence number.
        seq: u64,
        /// The turn's index.
        turn: usize,
    },
    /// A request to a path the fake does not serve; answered with HTTP 404.
    NotFound {
        /// The request's sequence number.
        seq: u64,
        /// The HTTP method.
        method: String,
        /// The path (without the query).
        path: String,
    },
}

/// The `request` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestEntry {
    /// The request's sequence number (1, 2, ...).
    pub seq: u64,
    /// Which method.
    pub method: ApiMethod,
    /// The model in the path.
    pub model: String,
    /// The path, without the query (which may hold the key).
    pub path: String,
    /// The API key's shape, never its value.
    pub api_key: Option<ApiKeyShape>,
    /// The conversation.
    pub contents: Vec<JournalContent>,
    /// The system instruction's texts joined with `\n`.
    pub system_instruction: Option<String>,
    /// The declared functions.
    pub tools: Vec<JournalTool>,
    /// `generationConfig` as sent.
    pub generation_config: Value,
}

/// The Gemini API methods the fake serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiMethod {
    /// `streamGenerateContent` (SSE).
    Stream,
    /// `generateContent` (one JSON).
    Generate,
    /// `countTokens`.
    CountTokens,
}

/// Where an API key came from and how long it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKeyShape {
    /// The header (`x-goog-api-key`, `authorization`), if it came in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// The query parameter (`key`), if it came in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The key's length in characters (after `Bearer ` for `authorization`).
    pub chars: usize,
}

/// A content of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalContent {
    /// `user` or `model`.
    pub role: String,
    /// Its parts.
    pub parts: Vec<JournalPart>,
}

/// A part, by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalPart {
    /// What kind of part.
    pub kind: PartKind,
    /// The text (text and thought parts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The function name (call and response parts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The call's arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// The tool result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
}

/// The kinds of part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartKind {
    /// `{"text": ...}`.
    Text,
    /// `{"text": ..., "thought": true}`.
    Thought,
    /// `{"functionCall": ...}`.
    FunctionCall,
    /// `{"functionResponse": ...}`.
    FunctionResponse,
    /// `{"inlineData": ...}`.
    InlineData,
    /// Anything else.
    Other,
}

/// A declared function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalTool {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its parameters (`parameters` or `parametersJsonSchema`).
    pub parameters: Value,
}

/// A journal that cannot be written or read.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The file could not be opened, written or read.
    #[error("journal {path}: {source}")]
    Io {
        /// The journal's path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is not a journal entry.
    #[error("journal {path} line {line}: {source}")]
    Line {
        /// The journal's path.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// The JSON error.
        source: serde_json::Error,
    },
}

/// The append-only journal: a JSON Lines file plus an in-memory copy.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    state: Mutex<JournalState>,
    appended: watch::Sender<usize>,
}

#[derive(Debug)]
struct JournalState {
    file: File,
    entries: Vec<JournalEntry>,
}

impl Journal {
    /// Creates (truncates) the file at `path`.
    pub fn create(path: PathBuf) -> Result<Self, JournalError> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)
            .map_err(|source| JournalError::Io {
                path: path.clone(),
                source,
            })?;
        Ok(Journal {
            path,
            state: Mutex::new(JournalState {
                file,
                entries: Vec::new(),
            }),
            appended: watch::Sender::new(0),
        })
    }

    /// Appends one entry to the file and the in-memory copy. A failed write is logged;
    /// the entry stays in memory.
    pub fn append(&self, entry: JournalEntry) {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        match serde_json::to_string(&entry) {
            Ok(mut line) => {
                line.push('\n');
                if let Err(error) = state.file.write_all(line.as_bytes()) {
                    tracing::error!(path = %self.path.display(), %error, "journal write failed");
                }
            }
            Err(error) => tracing::error!(%error, "journal entry does not serialize"),
        }
        state.entries.push(entry);
        let count = state.entries.len();
        drop(state);
        self.appended.send_replace(count);
    }

    /// A copy of every entry so far.
    pub fn entries(&self) -> Vec<JournalEntry> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .entries
            .clone()
    }

    /// Waits until an entry satisfies `predicate`, and returns it.
    pub async fn wait_for(&self, predicate: impl Fn(&JournalEntry) -> bool) -> JournalEntry {
        let mut appended = self.appended.subscribe();
        loop {
            if let Some(found) = self.entries().into_iter().find(&predicate) {
                return found;
            }
            if appended.changed().await.is_err() {
                // The sender lives as long as `self`; unreachable, but never spin.
                std::future::pending::<()>().await;
            }
        }
    }
}

/// Reads a journal file back, one entry per line.
pub fn read_journal(path: &Path) -> Result<Vec<JournalEntry>, JournalError> {
    let text = std::fs::read_to_string(path).map_err(|source| JournalError::Io {
        path: path.to_owned(),
        source,
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str(line).map_err(|source| JournalError::Line {
                path: path.to_owned(),
                line: index + 1,
                source,
            })
        })
        .collect()
}
