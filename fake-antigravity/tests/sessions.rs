//! `session/load` (history replay before the response, config reset), `session/resume`
//! (no replay), unknown ids (-32002), `session/close`; and `serve` in-process.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use agent_client_protocol::ErrorCode;
use fake_antigravity::{Script, ServeOptions, serve};
use serde_json::json;
use support::{WAIT, start_fake};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A session in `yolo` mode that answered one prompt ("first"), its echo consumed.
async fn session_with_one_turn(fake: &mut support::FakeSession) -> String {
    let session_id = fake.new_session(json!([])).await;
    fake.request(
        "session/set_config_option",
        json!({"sessionId": session_id, "configId": "mode", "value": "yolo"}),
    )
    .await
    .unwrap();
    fake.request(
        "session/prompt",
        json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "first"}]}),
    )
    .await
    .unwrap();
    assert_eq!(fake.next_update().await["content"]["text"], "first");
    session_id
}

#[tokio::test]
async fn load_replays_the_history_then_answers_with_default_config() {
    let mut fake = start_fake(&[], &[]).await;
    let session_id = session_with_one_turn(&mut fake).await;
    let loaded = fake
        .request(
            "session/load",
            json!({"sessionId": session_id, "cwd": "/tmp", "mcpServers": []}),
        )
        .await
        .unwrap();
    assert!(loaded.get("sessionId").is_none());
    assert_eq!(loaded["modes"]["currentModeId"], "default", "config resets");
    assert_eq!(loaded["configOptions"][0]["id"], "model");
    // The replay arrived before the response; the commands after it.
    assert_eq!(
        fake.next_update().await,
        json!({"content": {"text": "first", "type": "text"}, "sessionUpdate": "user_message_chunk"})
    );
    assert_eq!(
        fake.next_update().await,
        json!({"content": {"text": "first", "type": "text"}, "sessionUpdate": "agent_message_chunk"})
    );
    assert_eq!(
        fake.next_update().await["sessionUpdate"],
        "available_commands_update"
    );
    assert!(fake.close().await.success());
}

#[tokio::test]
async fn resume_does_not_replay() {
    let mut fake = start_fake(&[], &[]).await;
    let session_id = session_with_one_turn(&mut fake).await;
    let resumed = fake
        .request(
            "session/resume",
            json!({"sessionId": session_id, "cwd": "/tmp"}),
        )
        .await
        .unwrap();
    assert_eq!(resumed["models"]["currentModelId"], "gemini-3.8-flash-high");
    assert_eq!(
        fake.next_update().await["sessionUpdate"],
        "available_commands_update",
        "resume does not replay"
    );
    assert!(fake.close().await.success());
}

#[tokio::test]
async fn an_unknown_session_id_is_not_found() {
    let fake = start_fake(&[], &[]).await;
    let missing = fake
        .request(
            "session/resume",
            json!({"sessionId": "00000000-0000-4000-8000-000000000000", "cwd": "/tmp"}),
        )
        .await
        .unwrap_err();
    assert_eq!(missing.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert_eq!(
        missing.message,
        "Session not found in the current GEMINI_HOME"
    );
    assert_eq!(
        missing.data.as_ref().unwrap()["sessionId"],
        "00000000-0000-4000-8000-000000000000"
    );
    assert!(fake.close().await.success());
}

#[tokio::test]
async fn a_closed_session_takes_no_prompt() {
    let mut fake = start_fake(&[], &[]).await;
    let session_id = session_with_one_turn(&mut fake).await;
    assert_eq!(
        fake.request("session/close", json!({"sessionId": session_id}))
            .await
            .unwrap(),
        json!({})
    );
    let closed = fake
        .request(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]}),
        )
        .await
        .unwrap_err();
    assert_eq!(closed.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert!(fake.close().await.success());
}

#[tokio::test]
async fn serve_works_in_process_over_any_byte_streams() {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server);
    let served = tokio::spawn(serve(
        ServeOptions::new(Script::default()),
        server_read,
        server_write,
    ));
    let (client_read, mut client_write) = tokio::io::split(client);
    client_write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n")
        .await
        .unwrap();
    let mut lines = BufReader::new(client_read).lines();
    let line = tokio::time::timeout(WAIT, lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let answer: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["result"]["agentInfo"]["version"], "1.3.0");
    client_write.shutdown().await.unwrap();
    tokio::time::timeout(WAIT, served)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}
