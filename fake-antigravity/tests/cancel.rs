//! `session/cancel` as a notification mid-turn (while a permission request is pending, and
//! in a `wait_for_cancel` step) answers the prompt `cancelled`; an unmatched prompt is
//! journaled and answered in prose.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use agent_client_protocol::UntypedMessage;
use fake_antigravity::JournalEntry;
use serde_json::json;
use support::mcp_server::TestMcpServer;
use support::{ScriptedSession, WAIT, script_args, scripted_session, start_fake, write_script};

const SCRIPT: &str = r#"
turns:
  - match: {prompt_contains: "ask then wait"}
    steps:
      - call: {tool: echo_text, args: {text: "x"}}
      - text: "never sent"
  - match: {prompt_contains: "stream then wait"}
    steps:
      - text: "partial"
      - wait_for_cancel: {timeout_ms: 20000}
      - text: "never sent"
"#;

fn cancel(session_id: &str) -> UntypedMessage {
    UntypedMessage::new("session/cancel", json!({"sessionId": session_id})).unwrap()
}

#[tokio::test]
async fn cancel_while_permission_is_pending_answers_cancelled() {
    let server = TestMcpServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(dir.path(), SCRIPT);
    let mut fake = start_fake(&script_args(&script, &dir.path().join("journal")), &[]).await;
    let session_id = fake
        .new_session(json!([{"type": "http", "name": "b", "url": server.url, "headers": []}]))
        .await;

    let prompt = fake.start_prompt(&session_id, "ask then wait");
    assert_eq!(fake.next_update().await["status"], "pending");
    let permission = fake.next_request().await;
    fake.cx.send_notification(cancel(&session_id)).unwrap();
    let answer = tokio::time::timeout(WAIT, prompt)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(answer, json!({"stopReason": "cancelled"}));
    // The client answers the abandoned permission request late, as ACP asks it to.
    permission
        .responder
        .respond(json!({"outcome": {"outcome": "cancelled"}}))
        .unwrap();
    assert!(server.calls().is_empty());

    // The session still works afterwards.
    let answer = fake
        .request(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "hello?"}]}),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!({"stopReason": "end_turn"}));
    assert!(fake.close().await.success());
    server.stop().await;
}

#[tokio::test]
async fn cancel_during_wait_for_cancel_and_unmatched_prompts() {
    let ScriptedSession {
        dir: _dir,
        journal_dir,
        mut fake,
        session_id,
    } = scripted_session(SCRIPT, json!([])).await;

    let prompt = fake.start_prompt(&session_id, "stream then wait");
    assert_eq!(fake.next_update().await["content"]["text"], "partial");
    fake.cx.send_notification(cancel(&session_id)).unwrap();
    let answer = tokio::time::timeout(WAIT, prompt)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(answer, json!({"stopReason": "cancelled"}));

    let answer = fake
        .request(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "what is this?"}]}),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!({"stopReason": "end_turn"}));
    let reply = fake.next_update().await;
    assert_eq!(
        reply["content"]["text"],
        fake_antigravity::turn::prompt_turn::UNMATCHED_REPLY
    );

    assert!(fake.close().await.success());
    let journal = fake_antigravity::journal::read_dir(&journal_dir).unwrap();
    assert!(journal[0].contains(&JournalEntry::UnmatchedPrompt {
        prompt: "what is this?".into()
    }));
    assert!(
        !journal[0]
            .iter()
            .any(|e| matches!(e, JournalEntry::ExpectationFailed { .. }))
    );
}
