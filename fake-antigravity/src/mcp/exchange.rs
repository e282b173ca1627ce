//! What every MCP exchange of the fake shares, whether the client makes it (`mcp/client.rs`)
//! or an MCP client fault does (`faults/mcp_fault_calls.rs`): why an exchange failed
//! ([`McpClientError`]), the journal of one server's traffic (`McpJournal`: one
//! `McpRequest` per request, one `McpResponse` per answer or failure, with its JSON-RPC id,
//! and one `McpFaultApplied` per MCP client fault that acted),
//! whether an answer comes as an event stream (`is_event_stream`), and the JSON-RPC answer
//! found in a response body (`answer_in_body`). Both import this
//! file, so the faults need not import the client that calls them (no two files import
//! each other).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::journal::JournalEntry;
use crate::journal::writer::JournalWriter;

/// Why an MCP exchange failed. The texts never include header values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpClientError {
    /// A header from `session/new` is not a valid HTTP header.
    #[error("header `{0}` is not a valid HTTP header")]
    BadHeader(String),
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(String),
    /// The MCP request failed (transport, HTTP status, JSON-RPC error, or bad answer).
    #[error("{method} failed: {message}")]
    Request {
        /// The MCP method.
        method: String,
        /// The cause.
        message: String,
    },
    /// The MCP request timed out.
    #[error("{method} timed out after {millis} ms")]
    Timeout {
        /// The MCP method.
        method: String,
        /// The limit, in milliseconds.
        millis: u128,
    },
}

/// Journals one server's MCP traffic.
#[derive(Debug, Clone)]
pub(crate) struct McpJournal {
    journal: Option<Arc<JournalWriter>>,
    server: String,
}

impl McpJournal {
    /// Journals `server`'s traffic into `journal` (nothing, without one).
    pub(crate) fn new(journal: Option<Arc<JournalWriter>>, server: String) -> Self {
        Self { journal, server }
    }

    /// The server's name from `session/new`.
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    pub(crate) fn request(&self, method: &str, params: Value, rpc_id: Option<u64>) {
        if let Some(journal) = &self.journal {
            journal.record(&JournalEntry::McpRequest {
                server: self.server.clone(),
                method: method.to_string(),
                params,
                rpc_id,
            });
        }
    }

    /// Journals that the MCP client fault `fault` (its script name) was applied to this
    /// process's `tools/call` number `call`, doing `effect`.
    pub(crate) fn fault_applied(&self, fault: &str, call: usize, effect: String) {
        if let Some(journal) = &self.journal {
            journal.record(&JournalEntry::McpFaultApplied {
                fault: fault.to_owned(),
                call,
                server: self.server.clone(),
                effect,
            });
        }
    }

    pub(crate) fn response(
        &self,
        method: &str,
        params: Option<Value>,
        outcome: Result<Value, String>,
        rpc_id: Option<u64>,
    ) {
        if let Some(journal) = &self.journal {
            let (result, error) = match outcome {
                Ok(result) => (Some(result), None),
                Err(error) => (None, Some(error)),
            };
            journal.record(&JournalEntry::McpResponse {
                server: self.server.clone(),
                method: method.to_string(),
                result,
                error,
                params,
                rpc_id,
            });
        }
    }
}

/// Whether `headers` say the answer is a server-sent event stream (`text/event-stream`)
/// rather than one JSON body.
pub(crate) fn is_event_stream(headers: &http::HeaderMap) -> bool {
    headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// The JSON-RPC message answering `id` in a response body: the body itself (JSON), or
/// one of the `data:` events of an SSE body.
pub(crate) fn answer_in_body(body: &str, event_stream: bool, id: u64) -> Option<Value> {
    if !event_stream {
        return serde_json::from_str(body).ok();
    }
    let mut data = String::new();
    let mut found = None;
    for line in body.lines().chain(std::iter::once("")) {
        if let Some(part) = line.strip_prefix("data:") {
            data.push_str(part.trim_start());
        } else if line.is_empty() && !data.is_empty() {
            let message: Option<Value> = serde_json::from_str(&data).ok();
            data.clear();
            if let Some(message) = message.filter(|m| m.get("id") == Some(&json!(id))) {
                found = Some(message);
            }
        }
    }
    found
}
