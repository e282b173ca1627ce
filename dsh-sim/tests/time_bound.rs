#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The bound on a scenario's chat: a chat that outlives the runner's bound fails with a
//! message saying how to ask for more, and a scenario's own `time_bound_secs` applies when
//! it is longer than the runner's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use dsh_sim::runner::{DEFAULT_TIME_BOUND, RunnerOptions, Verdict, run_file};

/// DSH's tool takes 2.5 s: longer than a 1 s runner bound, far shorter than 30 s.
fn slow_scenario(dir: &Path, own_bound: Option<u64>) -> PathBuf {
    let bound = own_bound.map_or(String::new(), |secs| format!("time_bound_secs: {secs}\n"));
    let text = format!(
        "name: a chat that takes about 2.5 s\ncovers: []\n{bound}fake:\n  turns:\n    - steps:\n        \
         - call: {{ tool: slow, args: {{}} }}\n        - text: done\n\
         dsh:\n  tools:\n    - {{ name: slow, result: ok, delay_ms: 2500 }}\n  chat:\n    - user: go\n\
         expect:\n  finish: stop\n"
    );
    let path = dir.join("slow.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

fn options_with_bound(bound: Duration) -> RunnerOptions {
    let mut options = RunnerOptions::with_fake(PathBuf::from(env!("CARGO_BIN_EXE_dsh-sim")));
    options.time_bound = bound;
    options
}

#[test]
fn a_chat_past_the_runners_bound_fails_and_says_how_to_ask_for_more() {
    let dir = tempfile::tempdir().unwrap();
    let report = run_file(
        &slow_scenario(dir.path(), None),
        &options_with_bound(Duration::from_secs(1)),
    );
    let Verdict::Fail(reasons) = report.verdict else {
        panic!("expected a failure, got {:?}", report.verdict);
    };
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("did not finish within 1s") && r.contains("time_bound_secs")),
        "{reasons:?}"
    );
}

#[test]
fn a_scenarios_own_longer_bound_applies() {
    let dir = tempfile::tempdir().unwrap();
    let report = run_file(
        &slow_scenario(dir.path(), Some(30)),
        &options_with_bound(Duration::from_secs(1)),
    );
    assert_eq!(report.verdict, Verdict::Pass, "{:?}", report.verdict);
}

#[test]
fn the_default_bound_fails_a_hang_in_seconds() {
    assert_eq!(DEFAULT_TIME_BOUND, Duration::from_secs(10));
    assert_eq!(
        RunnerOptions::with_fake(PathBuf::from("x")).time_bound,
        DEFAULT_TIME_BOUND
    );
}
