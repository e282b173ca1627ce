//! The leak check, judged from outside the adapter once it is disposed: every server
//! process that started, and every child a server journaled, is gone, every scratch cwd a
//! server reported is removed, every bridge URL the server was given refuses
//! connections, and the scratch root is empty (but for what a live DSH process planted
//! there keeps: its session ledger and scratch folder, B08).
//!
//! A real server is not gone the instant it is killed: the adapter gives it its shutdown
//! grace before it kills the group, a grandchild outside the group dies when it notices,
//! and an orphan's zombie stays until PID 1 reaps it (1.3–2 s on these machines). So
//! every check that expects a process to exit waits for that exit, bounded by
//! [`exit_bound`], counts a zombie as gone ([`process_is_running`]), and reports a
//! process only once it outlived the bound, saying how long it was waited on.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::runner::judge::wire::ProcessFacts;

/// How long a loopback connection attempt may take before it counts as not refused.
const CONNECT_BOUND: Duration = Duration::from_secs(2);

/// The margin, above the adapter's shutdown grace, a process gets to be gone. PID 1 on
/// these machines reaps an orphan 1.3–2 s after it exited, and where `/proc` is missing a
/// zombie cannot be told from a running process; a grandchild the group kill does not
/// reach also needs a moment to notice its parent died. 3 s is above all of these.
pub const EXIT_MARGIN: Duration = Duration::from_secs(3);

/// The first pause between two looks at a process that is not ours to wait on.
const FIRST_LOOK_PAUSE: Duration = Duration::from_millis(5);

/// The longest pause between two looks.
const LONGEST_LOOK_PAUSE: Duration = Duration::from_millis(100);

/// How long a check waits for a process it expects to exit: the adapter's shutdown grace
/// (the runner never changes it) plus [`EXIT_MARGIN`].
pub fn exit_bound() -> Duration {
    antigravity_acp::AdapterConfig::default().shutdown_grace + EXIT_MARGIN
}

/// Waits until process `pid` no longer runs (a zombie counts as gone) or `deadline`
/// passes. `Ok` once it is gone; `Err(waited)` (this call's wait) when it outlived the
/// deadline.
///
/// The process is not this one's child (a server's child, or under `--server` the relay's
/// child), so there is nothing to wait on: it is looked at with `kill(pid, 0)` and its
/// `/proc` state, the pause between looks doubling from 5 ms to 100 ms.
pub async fn await_gone(pid: u32, deadline: Instant) -> Result<(), Duration> {
    let started = Instant::now();
    let mut pause = FIRST_LOOK_PAUSE;
    loop {
        if !process_is_running(pid) {
            return Ok(());
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(now - started);
        }
        tokio::time::sleep(pause.min(deadline - now)).await;
        pause = (pause * 2).min(LONGEST_LOOK_PAUSE);
    }
}

/// Every leak found, as readable sentences. A process still running is waited on until
/// `bound` from now before it counts as a leak.
pub async fn find_leaks(
    processes: &[ProcessFacts],
    bridge_urls: &[String],
    scratch_root: &Path,
    bound: Duration,
) -> Vec<String> {
    find_leaks_keeping(processes, bridge_urls, scratch_root, &[], bound).await
}

/// [`find_leaks`], where the scratch root may still hold the entries named in `kept`
/// (what a live DSH process planted there keeps: its session ledger and scratch folder,
/// B08). A session ledger (`*.sessions`) or scratch folder (`antigravity-acp-*`) left
/// there is named as a B08 leftover.
pub async fn find_leaks_keeping(
    processes: &[ProcessFacts],
    bridge_urls: &[String],
    scratch_root: &Path,
    kept: &[String],
    bound: Duration,
) -> Vec<String> {
    let began = Instant::now();
    let deadline = began + bound;
    let outlived = |what: String| {
        format!(
            "{what} is still running {} after the leak check began to wait for it (bound {})",
            seconds(began.elapsed()),
            seconds(bound)
        )
    };
    let mut leaks = Vec::new();
    for (n, process) in processes.iter().enumerate() {
        match process.pid {
            Some(pid) => {
                if await_gone(pid, deadline).await.is_err() {
                    leaks.push(outlived(format!("server process {pid}")));
                }
            }
            // A journal without its start record: the process cannot be checked, which
            // must not pass as "gone".
            None => leaks.push(format!(
                "server journal {} has no start record, so whether its process is gone \
                 cannot be checked",
                n + 1
            )),
        }
        for &child in &process.child_pids {
            if await_gone(child, deadline).await.is_err() {
                leaks.push(outlived(format!("child process {child} of a server")));
            }
        }
        if let Some(cwd) = &process.cwd
            && Path::new(cwd).exists()
        {
            leaks.push(format!("server scratch cwd {cwd} still exists"));
        }
    }
    for url in bridge_urls {
        if let Some(leak) = bridge_still_open(url).await {
            leaks.push(leak);
        }
    }
    match std::fs::read_dir(scratch_root) {
        Ok(entries) => {
            let mut left: Vec<String> = entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| !kept.contains(name))
                .collect();
            left.sort();
            let b08 = left.iter().any(|name| {
                name.ends_with(crate::runner::leftovers::LEDGER_SUFFIX)
                    || name.starts_with(crate::runner::leftovers::SCRATCH_PREFIX)
            });
            if !left.is_empty() {
                leaks.push(format!(
                    "the scratch root {} still holds {left:?}{}",
                    scratch_root.display(),
                    if b08 {
                        " (B08: a session ledger or server scratch folder outlived its \
                         process, or a dead DSH's was not swept)"
                    } else {
                        ""
                    }
                ));
            }
        }
        Err(error) => leaks.push(format!(
            "cannot read the scratch root {}: {error}",
            scratch_root.display()
        )),
    }
    leaks
}

/// A duration as seconds with one decimal (`5.0 s`).
pub fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}

/// Whether a process exists (`process_is_live`, a zombie included) or still runs
/// (`process_is_running`, a zombie counts as gone), checked with `kill(pid, 0)`. The leak
/// checks use `process_is_running`: a zombie has released everything but its pid, and
/// reaping an orphan is up to PID 1, not the adapter.
pub use test_support::{process_is_live, process_is_running};

/// `Some(leak)` when something still accepts connections at the bridge's address.
pub(crate) async fn bridge_still_open(url: &str) -> Option<String> {
    let authority = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())?;
    match tokio::time::timeout(CONNECT_BOUND, tokio::net::TcpStream::connect(authority)).await {
        Ok(Ok(_)) => Some(format!("bridge {authority} still accepts connections")),
        Ok(Err(_)) => None,
        Err(_) => Some(format!(
            "bridge {authority} neither accepted nor refused within {CONNECT_BOUND:?}"
        )),
    }
}
