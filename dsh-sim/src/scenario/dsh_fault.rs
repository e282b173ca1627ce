//! DSH's faults (`dsh.fault`): one way DSH itself misbehaves or is interrupted during a
//! chat, so a scenario (or `dsh-sim chaos`) can prove the adapter copes. The agent loop
//! applies them (`host/dsh_fault.rs`).

use schemars::JsonSchema;
use serde::Deserialize;

/// One DSH fault. `at_chunk` counts every chunk DSH receives over the whole chat
/// (every generation of every run, in order; a subagent's and a side request's chunks do
/// not count), 0-based; the fault strikes once. Subagent chats run without the fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum DshFault {
    /// DSH's abort signal fires when chunk `at_chunk` arrives; DSH then reads the stream
    /// to its terminal chunk.
    Abort {
        /// The chunk that triggers it.
        at_chunk: usize,
    },
    /// DSH drops the stream when chunk `at_chunk` arrives (an early return; the abort
    /// signal never fires) and ends the run.
    DropStream {
        /// The chunk that triggers it.
        at_chunk: usize,
    },
    /// DSH disposes the adapter when chunk `at_chunk` arrives, and reads the stream to its
    /// end while the disposal runs.
    Dispose {
        /// The chunk that triggers it.
        at_chunk: usize,
    },
    /// DSH answers its first tool round only after the adapter's `tool_timeout` has
    /// passed: it waits until the fake journals the `session/cancel` the timeout sends
    /// (bounded by the tool timeout plus 5 s; without a journal it waits that bound).
    /// Set a small `dsh.adapter.tool_timeout_ms`.
    LateResult,
    /// The first request that follows a tool round lacks that round's last tool result.
    /// When the adapter refuses it with an `error` finish, DSH sends the request again
    /// with the complete history, once (as a retry does); the refused generation stays
    /// in the transcript.
    HistoryDropResult,
    /// Like `history_drop_result`, but the round's last tool result appears twice.
    HistoryRepeatResult,
    /// The first request that follows a tool round of two or more calls carries that
    /// round's tool results in reverse order, and every later request keeps that order
    /// (DSH stored them so; no retry: a valid history).
    HistoryReorderResults,
    /// While its first tool round is parked (after finish(tool-calls), before running
    /// the tools), DSH makes a session-title side request (`purpose: session-title`, no
    /// tools, user text `Title this chat`); its failure is a violation.
    TitleWhileParked,
}
