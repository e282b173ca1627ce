//! The leak check is fair to a real server: a process it expects to exit is waited on,
//! with a bound, a zombie counts as gone, and only a process that outlives the bound is
//! reported, with how long it was waited on.

use std::process::{Child, Command};
use std::time::Duration;

use dsh_sim::runner::judge::leak::{
    exit_bound, find_leaks, find_leaks_keeping, process_is_live, process_is_running,
};
use dsh_sim::runner::judge::wire::ProcessFacts;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A server's facts naming `server` as its pid and `children` as its journaled children.
fn facts(server: u32, children: Vec<u32>) -> Vec<ProcessFacts> {
    vec![ProcessFacts {
        pid: Some(server),
        child_pids: children,
        ..ProcessFacts::default()
    }]
}

/// A process that sleeps `ms` milliseconds and exits, on every system: the fake's
/// helper, run from this package's dsh-sim binary (no `sleep` or `true` on Windows).
fn sleeper(ms: u64) -> std::io::Result<Child> {
    Command::new(env!("CARGO_BIN_EXE_dsh-sim"))
        .args(["fake-server", &format!("--fake-helper-sleep-ms={ms}")])
        .spawn()
}

/// Kills and reaps a child the test started, whatever the test's outcome.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _killed = self.0.kill();
        let _reaped = self.0.wait();
    }
}

#[test]
fn the_bound_is_the_shutdown_grace_plus_three_seconds() {
    assert_eq!(exit_bound(), Duration::from_secs(5));
}

/// A process that dies within the bound (here 300 ms after the check starts) passes, as
/// its zombie does (this test never reaps it before the check).
#[tokio::test]
async fn a_slow_death_within_the_bound_is_no_leak() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let server = Reaped(sleeper(300)?);
    let child = Reaped(sleeper(400)?);
    let leaks = find_leaks(
        &facts(server.0.id(), vec![child.0.id()]),
        &[],
        scratch.path(),
        Duration::from_secs(10),
    )
    .await;
    assert!(leaks.is_empty(), "{leaks:?}");
    Ok(())
}

/// An exited process nobody reaped (an orphan PID 1 has not reaped yet) is gone.
#[tokio::test]
async fn a_zombie_is_no_leak() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let mut zombie = Reaped(sleeper(0)?);
    let pid = zombie.0.id();
    // Wait, bounded, for the exit; nothing reaps it, so the child stays a zombie.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while process_is_running(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the sleeper never exited"
        );
        std::thread::yield_now();
    }
    assert!(
        process_is_live(pid),
        "not a zombie: the test proves nothing"
    );
    let leaks = find_leaks(
        &facts(pid, vec![]),
        &[],
        scratch.path(),
        Duration::from_millis(50),
    )
    .await;
    assert!(leaks.is_empty(), "{leaks:?}");
    zombie.0.wait()?;
    Ok(())
}

/// A process that outlives the bound is reported, named, with how long it was waited on.
#[tokio::test]
async fn a_survivor_is_reported_with_its_wait() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let server = Reaped(sleeper(30_000)?);
    let child = Reaped(sleeper(30_000)?);
    let leaks = find_leaks(
        &facts(server.0.id(), vec![child.0.id()]),
        &[],
        scratch.path(),
        Duration::from_millis(300),
    )
    .await
    .join("\n");
    let server_leak = format!(
        "server process {} is still running 0.3 s after the leak check began to wait for it (bound 0.3 s)",
        server.0.id()
    );
    let child_leak = format!(
        "child process {} of a server is still running 0.3 s after the leak check began to wait for it (bound 0.3 s)",
        child.0.id()
    );
    assert!(leaks.contains(&server_leak), "{leaks}");
    assert!(leaks.contains(&child_leak), "{leaks}");
    Ok(())
}

/// The other half of `scenarios/lifecycle/slow_death.yaml`: a server child outside the
/// adapter's process group that outlives the bound (it exits 8 s after the server, the
/// bound is 5 s) fails the run's leak check, which names it by the pid the fake journaled
/// and says how long it was waited on. A failing check by design, so a fixture, not a
/// scenario of the suite.
#[test]
fn a_server_child_that_outlives_the_bound_fails_the_leak_check() -> TestResult {
    use dsh_sim::runner::{RunnerOptions, Verdict, run_file};
    use fake_antigravity::journal::JournalEntry;
    let artifacts = tempfile::tempdir()?;
    let mut options = RunnerOptions::with_fake(env!("CARGO_BIN_EXE_dsh-sim").into());
    options.artifacts_root = Some(artifacts.path().to_owned());
    let report = run_file(
        std::path::Path::new("tests/fixtures/leak_survivor.yaml"),
        &options,
    );
    let folder = report
        .artifacts
        .ok_or("a failed run leaves its artefacts")?;
    let journal = fake_antigravity::journal::read_dir(&folder.join("journal"))?;
    let helper = journal
        .iter()
        .flatten()
        .find_map(|entry| match entry {
            JournalEntry::ChildSpawned { pid } => Some(*pid),
            _ => None,
        })
        .ok_or("the fake journaled no helper")?;
    let Verdict::Fail(reasons) = report.verdict else {
        return Err(format!("the survivor passed: {:?}", report.verdict).into());
    };
    let named = format!("leak: child process {helper} of a server is still running 5.");
    assert!(
        reasons.iter().any(|r| r.starts_with(&named)
            && r.contains("after the leak check began to wait for it (bound 5.0 s)")),
        "{reasons:#?}"
    );
    assert_eq!(reasons.len(), 1, "only the survivor fails: {reasons:#?}");
    // The helper ends by itself 8 s after the server; leave nothing behind.
    let rt = tokio::runtime::Runtime::new()?;
    let gone = rt.block_on(dsh_sim::runner::judge::leak::await_gone(
        helper,
        std::time::Instant::now() + Duration::from_secs(15),
    ));
    assert!(gone.is_ok(), "the helper never ended");
    Ok(())
}

/// B08: the scratch root may keep what a live DSH planted there (its ledger and scratch
/// folder), and nothing else; a session ledger or server scratch folder left is named
/// as B08's.
#[tokio::test]
async fn the_scratch_root_keeps_only_a_live_dshs_ledger_and_folder() -> TestResult {
    let scratch = tempfile::tempdir()?;
    std::fs::create_dir(scratch.path().join("antigravity-acp-live01"))?;
    std::fs::write(
        scratch.path().join("antigravity-acp-live01.sessions"),
        "home /h\n",
    )?;
    let kept = [
        "antigravity-acp-live01".to_owned(),
        "antigravity-acp-live01.sessions".to_owned(),
    ];
    let bound = Duration::from_millis(50);
    let leaks = find_leaks_keeping(&[], &[], scratch.path(), &kept, bound).await;
    assert!(leaks.is_empty(), "{leaks:?}");
    std::fs::write(
        scratch.path().join("antigravity-acp-dead01.sessions"),
        "home /h\n",
    )?;
    let leaks = find_leaks_keeping(&[], &[], scratch.path(), &kept, bound)
        .await
        .join("\n");
    assert!(
        leaks.contains("still holds [\"antigravity-acp-dead01.sessions\"] (B08:"),
        "{leaks}"
    );
    let unkept = find_leaks(&[], &[], scratch.path(), bound).await.join("\n");
    assert!(
        unkept.contains("antigravity-acp-live01.sessions"),
        "{unkept}"
    );
    Ok(())
}
