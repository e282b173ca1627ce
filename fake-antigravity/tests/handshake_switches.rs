//! The handshake switches, over real stdio: `initialize.protocol_version` makes the fake
//! answer `initialize` with another ACP version (on the wire, under the SDK), and
//! `session_new.error_code` answers every `session/new` with that error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use fake_antigravity::JournalEntry;
use serde_json::json;
use support::{script_args, start_fake, write_script};

#[tokio::test]
async fn initialize_answers_the_scripted_protocol_version() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(dir.path(), "initialize: { protocol_version: 2 }\n");
    let journal = dir.path().join("journal");
    let fake = start_fake(&script_args(&script, &journal), &[]).await;
    // The test's own client is a v1 SDK client: it refuses a version-2 answer itself.
    let refused = fake
        .request("initialize", json!({"protocolVersion": 1}))
        .await
        .unwrap_err();
    assert!(
        refused
            .data
            .as_ref()
            .unwrap()
            .to_string()
            .contains("negotiated 2"),
        "{refused:?}"
    );
    fake.close().await;
    let entries = fake_antigravity::journal::read_dir(&journal).unwrap();
    let answered: Vec<_> = entries
        .iter()
        .flatten()
        .filter_map(|entry| match entry {
            JournalEntry::AcpOut { frame } => frame.pointer("/result/protocolVersion").cloned(),
            _ => None,
        })
        .collect();
    assert_eq!(answered, [json!(2)]);
}

#[tokio::test]
async fn session_new_answers_the_scripted_error() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(dir.path(), "session_new: { error_code: -32603 }\n");
    let fake = start_fake(&script_args(&script, &dir.path().join("journal")), &[]).await;
    fake.request("initialize", json!({"protocolVersion": 1}))
        .await
        .unwrap();
    let refused = fake
        .request("session/new", json!({"cwd": "/tmp", "mcpServers": []}))
        .await
        .unwrap_err();
    assert_eq!(refused.code.value(), -32603);
    assert!(fake.close().await.success());
}
