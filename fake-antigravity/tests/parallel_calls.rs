//! The `parallel` step against a real rmcp Streamable-HTTP server on loopback: every call
//! announced with the bridge `_meta`, every permission request outstanding at once, every
//! `tools/call` in flight together (the server answers none before all have arrived), a
//! group `expect_result`, and a denial or a cancel inside the group.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use agent_client_protocol::UntypedMessage;
use fake_antigravity::JournalEntry;
use serde_json::{Value, json};
use support::mcp_server::TestMcpServer;
use support::{
    ScriptedSession, prompt_answer, script_args, scripted_session, start_fake, write_script,
};

const SCRIPT: &str = r#"
turns:
  - match: {prompt_contains: "echo twice"}
    steps:
      - parallel:
          - {tool: Echo, args: {text: "A"}}
          - {tool: Echo, args: {text: "B"}}
      - expect_result: {is_error: false, contains: "echo: "}
      - text: "both done"
"#;

fn bridge(url: &str) -> Value {
    json!([{"type": "http", "name": "dsh-bridge", "url": url, "headers": []}])
}

fn allow() -> Value {
    json!({"outcome": {"outcome": "selected", "optionId": "allow"}})
}

fn failures(entries: &[JournalEntry]) -> Vec<(usize, String)> {
    entries
        .iter()
        .filter_map(|e| match e {
            JournalEntry::ExpectationFailed { step, message, .. } => Some((*step, message.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn parallel_calls_are_asked_together_and_all_in_flight_before_any_answer() {
    let server = TestMcpServer::start_gated(2).await;
    let ScriptedSession {
        dir: _dir,
        journal_dir,
        mut fake,
        session_id,
    } = scripted_session(SCRIPT, bridge(&server.url)).await;
    let prompt = fake.start_prompt(&session_id, "please echo twice");

    let mut ids = Vec::new();
    for text in ["A", "B"] {
        let announced = fake.next_update().await;
        let id = announced["toolCallId"].as_str().unwrap().to_string();
        assert_eq!(
            announced,
            json!({
                "sessionUpdate": "tool_call", "toolCallId": id,
                "title": "dsh-bridge_echo_text", "kind": "other", "status": "pending",
                "content": [], "rawInput": {"arguments": {"text": text}},
                "_meta": {"mcp": {"tool": "echo_text", "server": "dsh-bridge"}, "is_mcp_tool_call": true}
            })
        );
        ids.push(id);
    }
    // Both permission requests are outstanding before either is answered.
    let first = fake.next_request().await;
    let second = fake.next_request().await;
    let asked: Vec<&Value> = [&first, &second]
        .iter()
        .map(|r| &r.params["toolCall"]["toolCallId"])
        .collect();
    assert_eq!(asked, [&json!(ids[0]), &json!(ids[1])]);
    assert_eq!(first.method, "session/request_permission");
    first.responder.respond(allow()).unwrap();
    second.responder.respond(allow()).unwrap();

    let mut statuses = Vec::new();
    for _ in 0..4 {
        let update = fake.next_update().await;
        assert_eq!(update["sessionUpdate"], "tool_call_update");
        statuses.push((
            update["toolCallId"].as_str().unwrap().to_string(),
            update["status"].as_str().unwrap().to_string(),
        ));
    }
    assert_eq!(
        statuses[..2],
        [
            (ids[0].clone(), "in_progress".to_string()),
            (ids[1].clone(), "in_progress".to_string())
        ]
    );
    let mut completed: Vec<&str> = statuses[2..].iter().map(|(id, _)| id.as_str()).collect();
    completed.sort_unstable();
    let mut expected: Vec<&str> = ids.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(completed, expected);
    assert!(
        statuses[2..]
            .iter()
            .all(|(_, status)| status == "completed"),
        "{statuses:?}"
    );
    assert_eq!(fake.next_update().await["content"]["text"], "both done");
    assert_eq!(
        prompt_answer(prompt).await,
        json!({"stopReason": "end_turn"})
    );
    assert_eq!(server.calls().len(), 2);

    assert!(fake.close().await.success());
    server.stop().await;
    let journal = fake_antigravity::journal::read_dir(&journal_dir).unwrap();
    let entries = &journal[0];
    assert_eq!(
        failures(entries),
        [],
        "the group expect_result held for both"
    );
    let call_traffic: Vec<&str> = entries
        .iter()
        .filter_map(|e| match e {
            JournalEntry::McpRequest { method, .. } if method == "tools/call" => Some("request"),
            JournalEntry::McpResponse { method, .. } if method == "tools/call" => Some("response"),
            _ => None,
        })
        .collect();
    assert_eq!(call_traffic, ["request", "request", "response", "response"]);
}

#[tokio::test]
async fn a_group_expectation_fails_when_one_result_misses_it() {
    let server = TestMcpServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let journal_dir = dir.path().join("journal");
    let script = write_script(
        dir.path(),
        r#"
turns:
  - steps:
      - parallel:
          - {tool: Echo, args: {text: "A"}}
          - {tool: Echo, args: {text: "B"}}
      - expect_result: {contains: "echo: A"}
"#,
    );
    let mut fake = start_fake(&script_args(&script, &journal_dir), &[]).await;
    let session_id = fake.new_session(bridge(&server.url)).await;
    let prompt = fake.start_prompt(&session_id, "go");
    for _ in 0..2 {
        fake.next_request()
            .await
            .responder
            .respond(allow())
            .unwrap();
    }
    assert_eq!(
        prompt_answer(prompt).await,
        json!({"stopReason": "end_turn"})
    );
    assert!(fake.close().await.success());
    server.stop().await;
    let journal = fake_antigravity::journal::read_dir(&journal_dir).unwrap();
    let failed = failures(&journal[0]);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].0, 1);
    assert!(
        failed[0].1.starts_with("parallel call 1 of the group"),
        "{}",
        failed[0].1
    );
}

#[tokio::test]
async fn a_denied_call_fails_alone_and_the_turn_ends_after_the_group() {
    let server = TestMcpServer::start().await;
    let ScriptedSession {
        dir: _dir,
        journal_dir,
        mut fake,
        session_id,
    } = scripted_session(SCRIPT, bridge(&server.url)).await;
    let prompt = fake.start_prompt(&session_id, "echo twice");
    let first = fake.next_update().await["toolCallId"].clone();
    let second = fake.next_update().await["toolCallId"].clone();
    let ask_first = fake.next_request().await;
    let ask_second = fake.next_request().await;
    ask_first.responder.respond(allow()).unwrap();
    ask_second
        .responder
        .respond(json!({"outcome": {"outcome": "cancelled"}}))
        .unwrap();

    let failed = fake.next_update().await;
    assert_eq!(
        failed,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": second, "status": "failed"})
    );
    let running = fake.next_update().await;
    assert_eq!(
        (&running["toolCallId"], &running["status"]),
        (&first, &json!("in_progress"))
    );
    let done = fake.next_update().await;
    assert_eq!(
        (&done["toolCallId"], &done["status"]),
        (&first, &json!("completed"))
    );
    assert_eq!(
        prompt_answer(prompt).await,
        json!({"stopReason": "end_turn"})
    );
    // Nothing after the group but the end-of-turn usage_update (`turn_usage`).
    let after: Vec<_> = std::iter::from_fn(|| fake.notifications.try_recv().ok()).collect();
    assert!(
        after
            .iter()
            .all(|(_, p)| p["update"]["sessionUpdate"] == "usage_update"),
        "no text after the group: {after:?}"
    );
    let calls = server.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].arguments, json!({"text": "A"}));

    assert!(fake.close().await.success());
    server.stop().await;
    let journal = fake_antigravity::journal::read_dir(&journal_dir).unwrap();
    let failed = failures(&journal[0]);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].0, 1);
    assert!(
        failed[0].1.contains("answered cancelled"),
        "{}",
        failed[0].1
    );
}

#[tokio::test]
async fn cancel_while_the_group_is_asked_answers_cancelled() {
    let server = TestMcpServer::start().await;
    let ScriptedSession {
        dir: _dir,
        mut fake,
        session_id,
        ..
    } = scripted_session(SCRIPT, bridge(&server.url)).await;
    let prompt = fake.start_prompt(&session_id, "echo twice");
    let first = fake.next_request().await;
    let second = fake.next_request().await;
    let cancel = UntypedMessage::new("session/cancel", json!({"sessionId": session_id})).unwrap();
    fake.cx.send_notification(cancel).unwrap();
    assert_eq!(
        prompt_answer(prompt).await,
        json!({"stopReason": "cancelled"})
    );
    for late in [first, second] {
        late.responder
            .respond(json!({"outcome": {"outcome": "cancelled"}}))
            .unwrap();
    }
    assert!(server.calls().is_empty());
    assert!(fake.close().await.success());
    server.stop().await;
}
