//! Shutting down with a held stream, and the binary: `listening <url>` first, the port
//! file, serving, and exit when stdin closes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Stdio;

use fake_gemini_api::JournalEntry;
use serde_json::json;
use support::{BOUND, Fake, prompt};
use tokio::io::{AsyncBufReadExt, BufReader};

#[tokio::test]
async fn shutdown_ends_a_held_stream_and_returns() {
    let script = json!({"turns": [{"steps": [{"text": "a"}, {"wait_for_cancel": {}}]}]});
    let fake = Fake::start(script).await;
    let mut events = fake.stream(&prompt("go", &[])).await;
    events.next().await.unwrap();
    let Fake { api, dir, .. } = fake;
    tokio::time::timeout(BOUND, api.shutdown())
        .await
        .expect("shutdown within the bound");
    let rest = tokio::time::timeout(BOUND, events.response.chunk())
        .await
        .unwrap();
    assert!(
        !matches!(rest, Ok(Some(_))),
        "no more events after shutdown"
    );
    drop(dir);
}

#[tokio::test]
async fn the_binary_prints_its_url_serves_and_exits_when_stdin_closes() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        json!({"turns": [{"steps": [{"text": "from the binary"}]}]}).to_string(),
    )
    .unwrap();
    let journal = dir.path().join("journal.jsonl");
    let port_file = dir.path().join("port");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_fake-gemini-api"))
        .arg("--script")
        .arg(&script)
        .arg("--journal")
        .arg(&journal)
        .arg("--port-file")
        .arg(&port_file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(BOUND, stdout.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let url = first.strip_prefix("listening ").unwrap().to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && !url.ends_with('/'),
        "{url}"
    );
    let port = std::fs::read_to_string(&port_file).unwrap();
    assert!(
        url.ends_with(&format!(":{}", port.trim())),
        "{url} vs {port}"
    );

    let answer = reqwest::Client::new()
        .post(format!("{url}/v1beta/models/m:generateContent"))
        .body(prompt("hi", &[]).to_string())
        .send()
        .await
        .unwrap();
    let (status, body) = support::json_of(answer).await;
    assert_eq!(status, 200);
    assert_eq!(
        support::parts(&body),
        vec![json!({"text": "from the binary"})]
    );

    drop(child.stdin.take());
    let exit = tokio::time::timeout(BOUND, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(exit.success());
    let entries = fake_gemini_api::read_journal(&journal).unwrap();
    assert!(matches!(
        &entries[1],
        JournalEntry::Response { turn: Some(0), .. }
    ));
}

#[tokio::test]
async fn the_binary_refuses_a_script_that_does_not_check() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        r#"{"turns": [{"steps": [{"stream": {"text": "x", "code_points": 0}}]}]}"#,
    )
    .unwrap();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_fake-gemini-api"))
        .arg("--script")
        .arg(&script)
        .arg("--journal")
        .arg(dir.path().join("journal.jsonl"))
        .stdin(Stdio::null())
        .output();
    let output = tokio::time::timeout(BOUND, output).await.unwrap().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("code_points must be at least 1"),
        "{stderr}"
    );
}
