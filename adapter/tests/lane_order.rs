//! C42, the no-tool lane serves requests in DSH's order, shown every run rather than by
//! luck: DSH makes two requests without tools, and the runtime polls the second
//! request's task before the first's. The lane must still serve the first request first,
//! because the place in it is taken inside the provider's `stream` call, not when the
//! request's task first runs (the bug fixed in 67198d3, which made the lifecycle test of
//! the lane fail about one run in six, as the workers happened to pick the tasks up).
//!
//! The order is forced by the runtime, not left to chance: on a multi-thread runtime with
//! one worker, a task spawned from a task on that worker goes to the worker's LIFO slot,
//! so of two tasks spawned one after the other the later is polled first (nothing can
//! steal either: there is no other worker). The test checks that this still holds before
//! it relies on it. DSH's requests are made from a task on the worker, as DSH's host
//! makes them, so each `stream` spawns its turn's task there.
//!
//! Unix only: the stand-in servers are `sh` scripts, as in `provider_lifecycle.rs`.
#![cfg(unix)]
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests make fixtures on disk and start stand-in servers (adapter/clippy.toml)"
)]
#![allow(missing_docs)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use antigravity_acp::contract::{
    ChunkStream, GenerateOptions, LlmAdapter, LlmErrorCode, Message, StreamChunk,
};
use antigravity_acp::{AdapterConfig, AntigravityProvider, ServerCommand};
use futures::StreamExt;
use test_support::{Failure, TestResult, process_is_live, within};

const BOUND: Duration = Duration::from_secs(20);

/// A config whose "server" appends its pid to `pidfile`, ignores SIGTERM and never
/// answers, so each request ends in the (short) model timeout.
fn config(scratch: &Path, pidfile: &Path) -> Result<AdapterConfig, Failure> {
    let turns = scratch.join("turns");
    std::fs::create_dir_all(&turns)?;
    Ok(AdapterConfig {
        server: ServerCommand {
            program: "sh".into(),
            args: vec![
                "-c".into(),
                "echo $$ >> \"$PIDFILE\"; trap '' TERM; exec sleep 300".into(),
            ],
            env: vec![("PIDFILE".into(), pidfile.display().to_string())],
        }
        .into(),
        scratch_root: Some(turns),
        // Wide margins on a loaded machine: the first server has the whole timeout to
        // write its pid, and the test the whole grace to count the servers before the lane
        // hands over.
        timeout: Duration::from_millis(1500),
        shutdown_grace: Duration::from_millis(1500),
        extra_write_paths: vec![scratch.to_path_buf()],
        ..AdapterConfig::default()
    })
}

fn request(text: &str) -> GenerateOptions {
    GenerateOptions::new(
        "antigravity-acp",
        "server-default",
        vec![Message::user(text)],
    )
}

/// The order in which the worker first polls two tasks spawned, `first` then `second`,
/// from a task of its own.
async fn first_polls_of_two_spawned_tasks() -> Result<Vec<&'static str>, Failure> {
    let polled = Arc::new(Mutex::new(Vec::new()));
    let spawner = tokio::spawn({
        let polled = polled.clone();
        async move {
            let task = |name: &'static str| {
                let polled = polled.clone();
                async move { polled.lock().map(|mut p| p.push(name)).ok() }
            };
            (tokio::spawn(task("first")), tokio::spawn(task("second")))
        }
    });
    let (first, second) = within(BOUND, "the spawning task", spawner).await??;
    within(BOUND, "the first task", first).await??;
    within(BOUND, "the second task", second).await??;
    let polled = polled.lock().map(|p| p.clone()).unwrap_or_default();
    Ok(polled)
}

/// The stream's chunks up to and including its finish.
async fn to_the_finish(stream: &mut ChunkStream) -> Result<Vec<StreamChunk>, Failure> {
    let mut items = Vec::new();
    while let Some(chunk) = within(BOUND, "the finish", stream.next()).await? {
        let finished = matches!(chunk, StreamChunk::Finish { .. });
        items.push(chunk);
        if finished {
            return Ok(items);
        }
    }
    Err(format!("the stream ended without a finish: {items:?}").into())
}

/// The code of the finish that ends `items`, which must carry a failure.
fn failure_code(items: &[StreamChunk]) -> Result<LlmErrorCode, Failure> {
    if let Some(StreamChunk::Finish { reason, .. }) = items.last()
        && let Some(failure) = reason.failure()
        && let Some(code) = LlmErrorCode::parse(&failure.code)
    {
        return Ok(code);
    }
    Err(format!("the stream did not end with a failure: {items:?}").into())
}

fn started_servers(pidfile: &Path) -> Result<Vec<u32>, Failure> {
    if !pidfile.exists() {
        return Ok(Vec::new());
    }
    let pids = std::fs::read_to_string(pidfile)?;
    Ok(pids
        .lines()
        .map(|pid| pid.trim().parse())
        .collect::<Result<_, _>>()?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn the_lane_serves_dshs_order_when_the_later_requests_task_runs_first() -> TestResult {
    assert_eq!(
        first_polls_of_two_spawned_tasks().await?,
        ["second", "first"],
        "the runtime no longer polls the later of two spawned tasks first, so this test \
         would not show what it claims: make the second request's task run first otherwise"
    );
    let scratch = tempfile::tempdir()?;
    let pidfile = scratch.path().join("pids");
    let provider = Arc::new(AntigravityProvider::new(config(scratch.path(), &pidfile)?));
    // DSH's two requests without tools, first then second, made on the worker: the
    // second's turn task is polled first.
    let dsh = tokio::spawn({
        let provider = provider.clone();
        async move {
            let first = provider.stream(request("first"));
            let second = provider.stream(request("second"));
            (first, second)
        }
    });
    let (mut first, second) = within(BOUND, "DSH's two requests", dsh).await??;
    let items = to_the_finish(&mut first).await?;
    assert_eq!(failure_code(&items)?, LlmErrorCode::AcpTimeout, "{items:?}");
    // The lane hands over only after the first request's server is disposed, which takes
    // the shutdown grace (the server ignores SIGTERM): a second server now means the
    // second request was served first.
    assert_eq!(
        started_servers(&pidfile)?.len(),
        1,
        "the second request was served before the first"
    );
    drop(first);
    let items = within(BOUND, "the second stream's end", second.collect::<Vec<_>>()).await?;
    assert_eq!(failure_code(&items)?, LlmErrorCode::AcpTimeout, "{items:?}");
    provider.dispose().await;
    for pid in started_servers(&pidfile)? {
        assert!(!process_is_live(pid), "server {pid} outlived disposal");
    }
    Ok(())
}
