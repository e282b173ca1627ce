//! A `stream` step with `interval_ms` sends its chunks one interval apart and stops at a
//! `session/cancel` during a pause; `session_close.advertise` advertises
//! `sessionCapabilities.close` (off by default, as 1.3.0), and
//! `session_close.late_permission` asks a late permission before answering a close.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use agent_client_protocol::UntypedMessage;
use serde_json::json;
use support::{ScriptedSession, WAIT, script_args, scripted_session, start_fake, write_script};

const SCRIPT: &str = r#"
turns:
  - match: {prompt_contains: "paced"}
    steps:
      - stream: {text: "abc", interval_ms: 100}
  - match: {prompt_contains: "slow"}
    steps:
      - stream: {text: "abcdef", interval_ms: 60000}
      - text: "never sent"
"#;

#[tokio::test]
async fn a_paced_stream_sends_each_chunk_an_interval_apart_and_stops_at_a_cancel() {
    let ScriptedSession {
        dir: _dir,
        mut fake,
        session_id,
        ..
    } = scripted_session(SCRIPT, json!([])).await;

    let started = Instant::now();
    let prompt = fake.start_prompt(&session_id, "paced");
    let mut texts = Vec::new();
    for _ in 0..3 {
        texts.push(fake.next_update().await["content"]["text"].clone());
    }
    assert_eq!(texts, [json!("a"), json!("b"), json!("c")]);
    // Two pauses of 100 ms lie between the three chunks.
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(
        support::prompt_answer(prompt).await,
        json!({"stopReason": "end_turn"})
    );

    let prompt = fake.start_prompt(&session_id, "slow");
    assert_eq!(fake.next_update().await["content"]["text"], "a");
    let cancel = json!({"sessionId": session_id});
    fake.cx
        .send_notification(UntypedMessage::new("session/cancel", cancel).unwrap())
        .unwrap();
    let answer = tokio::time::timeout(WAIT, prompt)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(answer, json!({"stopReason": "cancelled"}));
    assert!(fake.close().await.success());
}

async fn advertised_capabilities(script_text: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(dir.path(), script_text);
    let fake = start_fake(&script_args(&script, &dir.path().join("journal")), &[]).await;
    let answer = fake
        .request("initialize", json!({"protocolVersion": 1}))
        .await
        .unwrap();
    assert!(fake.close().await.success());
    answer["agentCapabilities"]["sessionCapabilities"].clone()
}

#[tokio::test]
async fn session_close_is_advertised_only_when_scripted() {
    assert_eq!(
        advertised_capabilities("turns: []\n").await,
        json!({"list": {}, "resume": {}})
    );
    assert_eq!(
        advertised_capabilities("session_close: { advertise: true }\n").await,
        json!({"list": {}, "resume": {}, "close": {}})
    );
}

/// `session_close.late_permission`: before answering `session/close`, the fake asks
/// permission for the named host tool of the closed session's MCP server (the name the
/// server lists it under, with the bridge `_meta`), and answers the close once the client
/// answered that.
#[tokio::test]
async fn a_late_permission_is_asked_before_session_close_is_answered() {
    let server = support::mcp_server::TestMcpServer::start().await;
    let script = r#"
session_close: { advertise: true, late_permission: Echo }
turns:
  - steps:
      - call: {tool: Echo, args: {text: "x"}}
      - text: "done"
"#;
    let bridge = json!([{"type": "http", "name": "dsh-bridge", "url": server.url, "headers": []}]);
    let ScriptedSession {
        dir: _dir,
        mut fake,
        session_id,
        ..
    } = scripted_session(script, bridge).await;
    let prompt = fake.start_prompt(&session_id, "go");
    let permission = fake.next_request().await;
    permission
        .responder
        .respond(json!({"outcome": {"outcome": "selected", "optionId": "allow"}}))
        .unwrap();
    assert_eq!(
        support::prompt_answer(prompt).await,
        json!({"stopReason": "end_turn"})
    );

    let params = json!({"sessionId": session_id});
    let close = fake
        .cx
        .send_request(UntypedMessage::new("session/close", params).unwrap());
    let close = tokio::spawn(close.block_task());
    let late = fake.next_request().await;
    assert_eq!(late.method, "session/request_permission");
    assert_eq!(
        late.params["toolCall"]["_meta"]["mcp"],
        json!({"tool": "echo_text", "server": "dsh-bridge"})
    );
    assert!(!close.is_finished(), "session/close was answered first");
    late.responder
        .respond(json!({"outcome": {"outcome": "cancelled"}}))
        .unwrap();
    let closed = tokio::time::timeout(WAIT, close).await.unwrap().unwrap();
    assert_eq!(closed.unwrap(), json!({}));
    assert!(fake.close().await.success());
    server.stop().await;
}
