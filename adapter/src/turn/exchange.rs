//! `ExchangeRegistry`: the unfinished tool exchanges that survive between DSH generations,
//! and the rule that decides whether a new generate continues one.
//!
//! A turn that stops for DSH's tools parks an entry: the calls it issued, the history it
//! was generated from, and a fingerprint of model, system prompt and tool catalog. A new
//! chat generate continues the entry only when its history is that history plus the
//! assistant's calls and their results, and its fingerprint is unchanged. Then every issued
//! call must have exactly one result: a missing or duplicate result fails explicitly.
//! Anything else (a new user message, other calls, changed tools or model) closes the old
//! exchange and the turn restarts from DSH's authoritative history.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::contract::{ChunkSender, GenerateOptions, Message, ToolResultView, blocks_text};
use crate::error::AdapterError;

/// The history a model segment was generated from, kept whole (shared, never copied) so
/// that a continuation is recognised by comparing messages: no serialisation or hashing
/// of the whole conversation on every generate.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SegmentHistory(Arc<Vec<Message>>);

fn hash_json<T: Serialize + ?Sized>(hasher: &mut Sha256, value: &T) {
    // Serialising our own contract types cannot fail; an empty encoding would only make
    // two requests look different, never alike.
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(&bytes);
}

impl SegmentHistory {
    /// The history of a request, taken over.
    pub(crate) fn new(messages: Vec<Message>) -> Self {
        Self(Arc::new(messages))
    }

    /// How many messages it holds.
    fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether `history` starts with this history.
    fn is_prefix_of(&self, history: &[Message]) -> bool {
        history
            .get(..self.len())
            .is_some_and(|prefix| prefix == self.0.as_slice())
    }

    /// The messages back (copied only if the history is still shared).
    pub(crate) fn into_messages(self) -> Vec<Message> {
        Arc::try_unwrap(self.0).unwrap_or_else(|shared| shared.as_ref().clone())
    }
}

/// What must not change inside one tool exchange: provider, model, system prompt and tool
/// catalog (by its digest, `None` for definitions that cannot be exported).
pub(crate) fn fingerprint(request: &GenerateOptions, tools_digest: Option<&[u8; 32]>) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hash_json(&mut hasher, &request.provider);
    hash_json(&mut hasher, &request.model);
    hash_json(&mut hasher, request.system());
    match tools_digest {
        Some(digest) => hasher.update(digest),
        None => hasher.update(b"refused"),
    }
    hasher.finalize().into()
}

/// The fingerprint of `request` with its tools' digest computed here (tests build
/// exchanges without a provider's catalogue cache).
#[cfg(test)]
pub(crate) fn fingerprint_of(request: &GenerateOptions) -> [u8; 32] {
    fingerprint(request, Some(&crate::bridge::tools_digest(request.tools())))
}

/// DSH's result for one issued call, as the parked MCP request is answered with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolOutcome {
    /// The call it answers.
    pub(crate) call_id: String,
    /// The result's text, as the model reads it.
    pub(crate) text: String,
    /// Whether DSH reports a failure or a denial.
    pub(crate) is_error: bool,
}

impl ToolOutcome {
    fn of(view: &ToolResultView<'_>) -> Self {
        Self {
            call_id: view.call_id.to_owned(),
            text: blocks_text(view.content),
            is_error: view.is_error,
        }
    }
}

/// DSH's next generate, delivered to the parked turn.
#[derive(Debug)]
pub(crate) struct Continuation {
    /// One result per issued call (in issue order); the turn resolves each by call id.
    pub(crate) results: Vec<ToolOutcome>,
    /// Where the continued stream goes.
    pub(crate) sink: ChunkSender,
    /// The new request's abort signal.
    pub(crate) abort: CancellationToken,
    /// The new request's whole history.
    pub(crate) history: SegmentHistory,
    /// The new request's `maxTokens` (`None`: no cap).
    pub(crate) max_tokens: Option<u64>,
}

/// A turn waiting for DSH's tool results.
#[derive(Debug)]
pub(crate) struct PendingExchange {
    /// The turn's id.
    pub(crate) id: u64,
    /// The call ids DSH must answer, in issue order.
    pub(crate) issued: Vec<String>,
    /// The fingerprint of the request that started the exchange.
    pub(crate) fingerprint: [u8; 32],
    /// The history the last segment was generated from.
    pub(crate) history: SegmentHistory,
    /// Where a continuation is delivered.
    pub(crate) control: mpsc::Sender<Continuation>,
    /// Cancelling it closes the turn.
    pub(crate) close: CancellationToken,
}

/// How a generate relates to the pending exchanges.
#[derive(Debug)]
pub(crate) enum Claim {
    /// Continue this exchange with these results (in issue order).
    Continue(PendingExchange, Vec<ToolOutcome>),
    /// Start a fresh turn.
    Fresh,
}

/// The pending exchanges of one provider.
#[derive(Debug, Default)]
pub(crate) struct ExchangeRegistry {
    pending: Mutex<Vec<PendingExchange>>,
}

/// What a history adds after an exchange's prefix.
struct Tail<'a> {
    calls: HashSet<&'a str>,
    results: Vec<ToolResultView<'a>>,
    has_user_message: bool,
}

fn tail_of(messages: &[Message]) -> Tail<'_> {
    let mut tail = Tail {
        calls: HashSet::new(),
        results: Vec::new(),
        has_user_message: false,
    };
    for message in messages {
        tail.has_user_message |= message.is_prompt();
        tail.calls
            .extend(message.tool_calls().map(|call| call.id.as_str()));
        tail.results.extend(message.tool_results());
    }
    tail
}

/// The results in issue order, or why they do not answer the issued calls exactly.
fn match_results(
    issued: &[String],
    results: &[ToolResultView<'_>],
) -> Result<Vec<ToolOutcome>, AdapterError> {
    let mut by_id: HashMap<&str, Vec<&ToolResultView<'_>>> = HashMap::new();
    for result in results {
        by_id.entry(result.call_id).or_default().push(result);
    }
    if let Some(unknown) = by_id.keys().find(|id| !issued.iter().any(|i| i == *id)) {
        return Err(AdapterError::InvalidHistory(format!(
            "a tool result answers call `{unknown}`, which this exchange never issued"
        )));
    }
    issued
        .iter()
        .map(|id| match by_id.get(id.as_str()).map(Vec::as_slice) {
            Some([one]) => Ok(ToolOutcome::of(one)),
            Some([]) | None => Err(AdapterError::ToolResultsMissing(format!(
                "the tool result for call `{id}` is missing"
            ))),
            Some(_) => Err(AdapterError::InvalidHistory(format!(
                "call `{id}` has more than one tool result"
            ))),
        })
        .collect()
}

impl ExchangeRegistry {
    /// Parks an exchange until DSH answers its calls.
    pub(crate) fn park(&self, exchange: PendingExchange) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.push(exchange);
        }
    }

    /// Removes a turn's entry; `true` when it was still parked (no continuation claimed
    /// it).
    pub(crate) fn withdraw(&self, id: u64) -> bool {
        let Ok(mut pending) = self.pending.lock() else {
            return false;
        };
        let before = pending.len();
        pending.retain(|exchange| exchange.id != id);
        pending.len() != before
    }

    /// Decides what `request` continues. Exchanges it supersedes are closed.
    pub(crate) fn claim(
        &self,
        request: &GenerateOptions,
        fingerprint: &[u8; 32],
    ) -> Result<Claim, AdapterError> {
        // Title and compaction requests never borrow a pending tool turn (C30).
        if request.purpose.is_some() {
            return Ok(Claim::Fresh);
        }
        let Ok(mut pending) = self.pending.lock() else {
            return Ok(Claim::Fresh);
        };
        let mut index = 0;
        while let Some(exchange) = pending.get(index) {
            // Read only when the request does not continue the exchange: a scan of the
            // whole history that a continuation need not pay.
            let referenced = || {
                exchange
                    .issued
                    .iter()
                    .any(|id| mentions_call(&request.messages, id))
            };
            if !exchange.history.is_prefix_of(&request.messages) {
                if referenced() {
                    // The conversation the exchange belongs to moved on without it.
                    pending.swap_remove(index).close.cancel();
                } else {
                    index += 1;
                }
                continue;
            }
            let tail = tail_of(
                request
                    .messages
                    .get(exchange.history.len()..)
                    .unwrap_or_default(),
            );
            let same_calls = tail.calls.len() == exchange.issued.len()
                && exchange
                    .issued
                    .iter()
                    .all(|id| tail.calls.contains(id.as_str()));
            if tail.has_user_message || !same_calls || exchange.fingerprint != *fingerprint {
                if tail.has_user_message || referenced() {
                    pending.swap_remove(index).close.cancel();
                } else {
                    index += 1;
                }
                continue;
            }
            let results = match_results(&exchange.issued, &tail.results)?;
            let exchange = pending.swap_remove(index);
            return Ok(Claim::Continue(exchange, results));
        }
        Ok(Claim::Fresh)
    }
}

fn mentions_call(history: &[Message], call_id: &str) -> bool {
    history.iter().any(|message| {
        message.tool_calls().any(|call| call.id == call_id)
            || message.tool_results().iter().any(|r| r.call_id == call_id)
    })
}

#[cfg(test)]
mod tests;
