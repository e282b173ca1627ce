//! The runner's side of DSH's faults (`dsh.fault`): the scenario's plan, with the
//! adapter's tool timeout and, for `late_result`, a wait on the fake's journal: it returns
//! once the fake has read a `session/cancel` more than when the wait began (what the
//! adapter's tool timeout sends when it ends a parked turn), or at the tool timeout plus
//! [`LATE_MARGIN`]; and for a tool's `hold_until_fake_answers`, a wait until the fake has
//! journaled that many answers to its `tools/call`, or [`HOLD_BOUND`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fake_antigravity::journal::JournalEntry;

use crate::host::dsh_fault::{AnswersWait, FaultPlan, HOLD_BOUND, LATE_MARGIN, LateWait};
use crate::scenario::Scenario;

/// How often the journal is read while waiting on it.
const POLL: Duration = Duration::from_millis(10);

/// The plan for `scenario`'s DSH fault (none: a plan that never strikes).
pub fn fault_plan(scenario: &Scenario, journal_dir: Option<&Path>) -> Arc<FaultPlan> {
    let tool_timeout = scenario
        .dsh
        .adapter
        .tool_timeout_ms
        .map(Duration::from_millis)
        .unwrap_or_else(|| antigravity_acp::AdapterConfig::default().tool_timeout);
    let late_wait = journal_dir.map(|dir| {
        let dir = dir.to_path_buf();
        let bound = tool_timeout + LATE_MARGIN;
        let wait: LateWait = Box::new(move || Box::pin(await_new_cancel(dir.clone(), bound)));
        wait
    });
    let answers_wait = journal_dir.map(|dir| {
        let dir = dir.to_path_buf();
        let wait: AnswersWait =
            Box::new(move |answers| Box::pin(await_answers(dir.clone(), answers)));
        wait
    });
    Arc::new(
        FaultPlan::new(scenario.dsh.fault, tool_timeout, late_wait).with_answers_wait(answers_wait),
    )
}

/// How many entries of the fake's journal, over all its processes, `counted` accepts.
fn journaled(dir: &Path, counted: impl Fn(&JournalEntry) -> bool) -> usize {
    fake_antigravity::journal::read_dir(dir)
        .map(|journal| journal.iter().flatten().filter(|e| counted(e)).count())
        .unwrap_or(0)
}

/// How many answers to its MCP `tools/call` the fake has journaled, over all its processes.
pub fn tool_call_answers(dir: &Path) -> usize {
    journaled(
        dir,
        |entry| matches!(entry, JournalEntry::McpResponse { method, .. } if method == "tools/call"),
    )
}

/// Returns once the fake has journaled `answers` `tools/call` answers, or after
/// [`HOLD_BOUND`].
async fn await_answers(dir: PathBuf, answers: usize) {
    let started = Instant::now();
    while tool_call_answers(&dir) < answers && started.elapsed() < HOLD_BOUND {
        tokio::time::sleep(POLL).await;
    }
}

/// How many `session/cancel` the fake has read, over all its processes.
fn cancels(dir: &Path) -> usize {
    journaled(dir, |entry| {
        matches!(entry, JournalEntry::AcpIn { frame }
            if frame.get("method").and_then(|m| m.as_str()) == Some("session/cancel"))
    })
}

/// Returns once a `session/cancel` more than now is journaled, or after `bound`.
async fn await_new_cancel(dir: PathBuf, bound: Duration) {
    let before = cancels(&dir);
    let started = Instant::now();
    while cancels(&dir) <= before && started.elapsed() < bound {
        tokio::time::sleep(POLL).await;
    }
}
