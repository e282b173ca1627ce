//! `AntigravityProvider::live_tasks`, the count `dsh-sim chaos` reads after disposal
//! (claim B04), in a test binary of its own: the count is the process's, so no other test
//! may run turns beside this one. A running turn counts; a disposed provider leaves none.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "the test makes a scratch folder and starts a stand-in server (adapter/clippy.toml)"
)]
#![allow(missing_docs)]

use std::time::Duration;

use antigravity_acp::contract::{GenerateOptions, LlmAdapter, Message};
use antigravity_acp::{AdapterConfig, AntigravityProvider, ServerCommand};
use test_support::TestResult;

#[tokio::test(flavor = "multi_thread")]
async fn a_running_turn_is_counted_and_a_disposed_provider_leaves_none() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let provider = AntigravityProvider::new(AdapterConfig {
        // A "server" that never answers: the turn waits on its `initialize`.
        server: ServerCommand {
            program: "sh".into(),
            args: vec!["-c".into(), "exec sleep 300".into()],
            env: Vec::new(),
        }
        .into(),
        scratch_root: Some(scratch.path().to_path_buf()),
        shutdown_grace: Duration::from_millis(200),
        ..AdapterConfig::default()
    });
    let stream = provider.stream(GenerateOptions::new(
        "antigravity-acp",
        "server-default",
        vec![Message::user("hello")],
    ));
    assert!(
        provider.live_tasks() >= 1,
        "a running turn's task is not counted"
    );
    provider.dispose().await;
    assert_eq!(
        provider.live_tasks(),
        0,
        "tasks counted alive after disposal returned"
    );
    drop(stream);
    Ok(())
}
