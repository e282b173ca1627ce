//! The runner's side of DSH's faults (`dsh.fault`): the scenario's plan, with the
//! adapter's tool timeout and, for `late_result`, a wait on the fake's journal: it returns
//! once the fake has read a `session/cancel` more than when the wait began (what the
//! adapter's tool timeout sends when it ends a parked turn), or at the tool timeout plus
//! [`LATE_MARGIN`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fake_antigravity::journal::JournalEntry;

use crate::host::faults::{FaultPlan, LATE_MARGIN, LateWait};
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
    Arc::new(FaultPlan::new(scenario.dsh.fault, tool_timeout, late_wait))
}

/// How many `session/cancel` the fake has read, over all its processes.
fn cancels(dir: &Path) -> usize {
    fake_antigravity::journal::read_dir(dir)
        .map(|journal| {
            journal
                .iter()
                .flatten()
                .filter(|entry| {
                    matches!(entry, JournalEntry::AcpIn { frame }
                        if frame.get("method").and_then(|m| m.as_str()) == Some("session/cancel"))
                })
                .count()
        })
        .unwrap_or(0)
}

/// Returns once a `session/cancel` more than now is journaled, or after `bound`.
async fn await_new_cancel(dir: PathBuf, bound: Duration) {
    let before = cancels(&dir);
    let started = Instant::now();
    while cancels(&dir) <= before && started.elapsed() < bound {
        tokio::time::sleep(POLL).await;
    }
}
