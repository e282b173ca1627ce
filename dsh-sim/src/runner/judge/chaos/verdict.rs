//! The runner's side of `expect.chaos`: once a run is over, what the base scenario's own
//! checks would have failed that chaos excuses (a `listModels` a fault failed cleanly), and
//! the invariants' verdict on the rest, added to the run's failures.

use fake_antigravity::journal::JournalEntry;

use crate::host::transcript::Transcript;
use crate::runner::judge::chaos::invariants::{ChaosOutcome, Observed, judge};
use crate::runner::judge::chaos::watch::RunWatch;
use crate::scenario::ChaosExpectation;

/// How a failed `listModels` starts its failure in the runner (excused under chaos).
pub const LIST_MODELS_FAILED: &str = "listModels failed: ";

/// What a run left for the verdict.
#[derive(Debug)]
pub struct RunLeft<'a> {
    /// DSH's record.
    pub transcript: &'a Transcript,
    /// The fake's journal.
    pub journal: &'a [Vec<JournalEntry>],
    /// The fake's planted secret.
    pub secret: Option<&'a str>,
    /// Adapter tasks alive after disposal.
    pub live_tasks: usize,
}

/// Moves the excused failures to `notes`, judges the run, and adds every violation to
/// `failures`.
pub fn judge_run(
    expect: &ChaosExpectation,
    watch: RunWatch,
    left: &RunLeft<'_>,
    failures: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> ChaosOutcome {
    let (excused, kept): (Vec<String>, Vec<String>) = std::mem::take(failures)
        .into_iter()
        .partition(|f| f.starts_with(LIST_MODELS_FAILED));
    *failures = kept;
    notes.extend(excused);
    // The secret is looked for in every failure and note, excused or not.
    let judged: Vec<String> = failures.iter().chain(notes.iter()).cloned().collect();
    let watched = watch.finish();
    let observed = Observed {
        transcript: left.transcript,
        journal: left.journal,
        watched: &watched,
        secret: left.secret,
        live_tasks: left.live_tasks,
        failures: &judged,
    };
    let outcome = judge(expect, &observed);
    failures.extend(outcome.violations.iter().cloned());
    outcome
}
