//! What must hold between a chat's runs, under either host: before a run, the server
//! exits it awaits (`await_exits`); after it, every bridge closed (at once, or within a
//! bound after an abort that DSH does not wait out) and nothing left of a finished turn.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::runner::judge::{after_run, leak, wire};
use crate::scenario::{self, AbortPoint};

/// Every bridge the fake was given so far that still accepts connections.
async fn open_bridges(journal_dir: &Path) -> Vec<String> {
    let Ok(journal) = fake_antigravity::journal::read_dir(journal_dir) else {
        return vec!["cannot read the fake's journal".to_owned()];
    };
    let mut open = Vec::new();
    for url in wire::bridge_urls(&wire::extract(&journal)) {
        open.extend(leak::bridge_still_open(&url).await);
    }
    open
}

/// The bridges still open once every bridge refused, or `bound` passed.
async fn bridges_closed_within(journal_dir: &Path, bound: Duration) -> Vec<String> {
    let started = Instant::now();
    loop {
        let open = open_bridges(journal_dir).await;
        if open.is_empty() || started.elapsed() >= bound {
            return open;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What must hold before the run for `entry` starts: the exits it awaits (`await_exits`).
pub(crate) async fn checks_before_run(
    entry: &scenario::ChatEntry,
    journal_dir: Option<&Path>,
    time_bound: Duration,
) -> Vec<String> {
    if let (Some(count), Some(dir)) = (entry.await_exits, journal_dir)
        && let Err(why) = after_run::await_exits(dir, count, time_bound).await
    {
        return vec![format!("before the run for {:?}: {why}", entry.user)];
    }
    Vec::new()
}

/// What must hold once DSH holds the terminal part of the run for `entry`.
pub(crate) async fn checks_after_run(
    entry: &scenario::ChatEntry,
    journal_dir: Option<&Path>,
    fault_drops_streams: bool,
) -> Vec<String> {
    // Once DSH holds a run's terminal part, every bridge so far must be closed
    // (C14, C33). After an abort on tool calls (or dropping the stream) DSH does not
    // wait for the turn, but that alone must end it (C48, C49): every bridge refuses
    // within a bound. After
    // DSH left the calls without aborting, the turn stays parked by design, so
    // nothing is judged until the next run.
    let Some(dir) = journal_dir else {
        return Vec::new();
    };
    let open = match entry.abort {
        Some(AbortPoint::OnToolCalls | AbortPoint::DropOnFirstDelta) => {
            bridges_closed_within(dir, after_run::SETTLE_BOUND).await
        }
        Some(AbortPoint::LeaveToolCalls) => return Vec::new(),
        // A DSH fault that drops the stream or aborts mid-turn: as after an abort on tool calls.
        None if fault_drops_streams => bridges_closed_within(dir, after_run::SETTLE_BOUND).await,
        Some(AbortPoint::OnFirstDelta | AbortPoint::OnFirstDeltaReadingOn) | None => {
            open_bridges(dir).await
        }
    };
    let mut failures: Vec<String> = open
        .into_iter()
        .map(|open| format!("after the run for {:?}: {open}", entry.user))
        .collect();
    // After every run, not only at disposal: what is alive is idle and healthy,
    // and no finished turn left its session cwd or its scratch dir (C14, C38).
    failures.extend(
        after_run::leaks_after_run(dir, leak::exit_bound())
            .await
            .into_iter()
            .map(|leak| format!("leak after the run for {:?}: {leak}", entry.user)),
    );
    failures
}
