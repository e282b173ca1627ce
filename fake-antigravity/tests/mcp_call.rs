//! A scripted `call` against a real rmcp Streamable-HTTP server on loopback: the pending
//! `tool_call` with the bridge `_meta`, `session/request_permission`, the real `tools/call`
//! carrying the exact `Authorization` header, the final updates, and the journal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use agent_client_protocol::v1::schema::{RequestPermissionRequest, SessionNotification};
use fake_antigravity::JournalEntry;
use serde_json::{Value, json};
use support::mcp_server::TestMcpServer;
use support::{ScriptedSession, WAIT, scripted_session};

const SCRIPT: &str = r#"
turns:
  - match: {prompt_contains: "use the echo tool"}
    steps:
      - thought: "I should echo."
      - call: {tool: Echo, args: {text: "PROBE-9"}}
      - expect_result: {is_error: false, contains: "echo: PROBE-9"}
      - text: "done"
  - match: {prompt_contains: "call a missing tool"}
    steps:
      - call: {tool: nonexistent}
      - expect_result: {is_error: false}
      - text: "went on"
"#;

fn bridge(url: &str) -> Value {
    json!([{
        "type": "http",
        "name": "dsh-bridge",
        "url": url,
        "headers": [{"name": "Authorization", "value": "Bearer t0k-secret"}]
    }])
}

#[tokio::test]
async fn scripted_call_goes_through_permission_and_a_real_mcp_server() {
    let server = TestMcpServer::start().await;
    let ScriptedSession {
        dir: _dir,
        journal_dir,
        mut fake,
        session_id,
    } = scripted_session(SCRIPT, bridge(&server.url)).await;

    let prompt = fake.start_prompt(&session_id, "please use the echo tool");

    let thought = fake.next_update().await;
    assert_eq!(
        thought,
        json!({"content": {"text": "I should echo.", "type": "text"}, "sessionUpdate": "agent_thought_chunk"})
    );
    let announced = fake.next_update().await;
    let tool_call_id = announced["toolCallId"].as_str().unwrap().to_string();
    assert_eq!(tool_call_id.len(), 32);
    assert!(tool_call_id.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(
        announced,
        json!({
            "sessionUpdate": "tool_call",
            "toolCallId": tool_call_id,
            "title": "dsh-bridge_echo_text",
            "kind": "other",
            "status": "pending",
            "content": [],
            "rawInput": {"arguments": {"text": "PROBE-9"}},
            "_meta": {"mcp": {"tool": "echo_text", "server": "dsh-bridge"}, "is_mcp_tool_call": true}
        })
    );

    let permission = fake.next_request().await;
    assert_eq!(permission.method, "session/request_permission");
    let mut expected_tool_call = announced.clone();
    expected_tool_call
        .as_object_mut()
        .unwrap()
        .remove("sessionUpdate");
    assert_eq!(
        permission.params,
        json!({
            "sessionId": session_id,
            "toolCall": expected_tool_call,
            "options": [
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "deny", "name": "Deny", "kind": "reject_once"}
            ]
        })
    );
    serde_json::from_value::<RequestPermissionRequest>(permission.params.clone()).unwrap();
    permission
        .responder
        .respond(json!({"outcome": {"outcome": "selected", "optionId": "allow"}}))
        .unwrap();

    let running = fake.next_update().await;
    assert_eq!(
        running,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id,
               "status": "in_progress", "title": "Running dsh-bridge_echo_text"})
    );
    let finished = fake.next_update().await;
    assert_eq!(
        finished,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id,
               "status": "completed", "rawOutput": "Call echo_text"})
    );
    let (method, params) = fake.next_notification().await;
    assert_eq!(method, "session/update");
    serde_json::from_value::<SessionNotification>(params.clone()).unwrap();
    assert_eq!(params["update"]["content"]["text"], "done");

    let answer = tokio::time::timeout(WAIT, prompt)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(answer, json!({"stopReason": "end_turn"}));

    let calls = server.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].tool, "echo_text");
    assert_eq!(calls[0].arguments, json!({"text": "PROBE-9"}));
    assert_eq!(calls[0].authorization.as_deref(), Some("Bearer t0k-secret"));
    // By default (`mcp_client.version_header: negotiated`): no version header on
    // `initialize`, which announces 2026-07-28, then the version `initialize` negotiated
    // on every later request, as the MCP spec requires (docs/antigravity-1.3.0.md §20).
    let seen = server.seen();
    let versions: Vec<&str> = seen.iter().map(|(_, version)| version.as_str()).collect();
    assert_eq!(
        versions,
        ["-", "2025-11-25", "2025-11-25", "2025-11-25"],
        "{seen:?}"
    );

    assert!(fake.close().await.success());
    server.stop().await;

    let journal = fake_antigravity::journal::read_dir(&journal_dir).unwrap();
    let entries = &journal[0];
    let session_new = entries
        .iter()
        .find_map(|e| match e {
            JournalEntry::AcpIn { frame } if frame["method"] == "session/new" => Some(frame),
            _ => None,
        })
        .expect("session/new journaled");
    assert_eq!(
        session_new["params"]["mcpServers"][0]["headers"][0]["value"],
        "Bearer <redacted len=10 text fp=70cde383>",
        "tokens never reach the journal, only their shape and a fingerprint"
    );
    assert!(entries.iter().any(|e| matches!(e,
        JournalEntry::AcpOut { frame } if frame["method"] == "session/request_permission")));
    assert!(entries.iter().any(|e| matches!(e,
        JournalEntry::AcpIn { frame } if frame["result"]["outcome"]["optionId"] == "allow")));
    let mcp: Vec<(String, String)> = entries
        .iter()
        .filter_map(|e| match e {
            JournalEntry::McpRequest { server, method, .. } => {
                Some((format!("request {method}"), server.clone()))
            }
            JournalEntry::McpResponse {
                server,
                method,
                error: None,
                ..
            } => Some((format!("response {method}"), server.clone())),
            _ => None,
        })
        .collect();
    let order: Vec<&str> = mcp.iter().map(|(what, _)| what.as_str()).collect();
    assert_eq!(
        order,
        [
            "request initialize",
            "response initialize",
            "request notifications/initialized",
            "response notifications/initialized",
            "request tools/list",
            "response tools/list",
            "request tools/call",
            "response tools/call"
        ]
    );
    assert!(mcp.iter().all(|(_, server)| server == "dsh-bridge"));
    assert!(entries.iter().any(|e| matches!(e,
        JournalEntry::McpRequest { method, params, .. }
            if method == "tools/call" && params == &json!({"name": "echo_text", "arguments": {"text": "PROBE-9"}}))));
    assert!(entries.iter().any(|e| matches!(e,
        JournalEntry::McpRequest { method, params, .. }
            if method == "initialize" && params["protocolVersion"] == "2026-07-28")));
    assert!(entries.iter().any(|e| matches!(e,
        JournalEntry::McpResponse { method, result: Some(result), .. }
            if method == "tools/call" && result["content"][0]["text"] == "echo: PROBE-9")));
    assert!(
        !entries
            .iter()
            .any(|e| matches!(e, JournalEntry::ExpectationFailed { .. })),
        "{entries:#?}"
    );
}

#[tokio::test]
async fn denied_permission_fails_the_call_and_ends_the_turn() {
    let server = TestMcpServer::start().await;
    let ScriptedSession {
        dir: _dir,
        journal_dir,
        mut fake,
        session_id,
    } = scripted_session(SCRIPT, bridge(&server.url)).await;

    let prompt = fake.start_prompt(&session_id, "use the echo tool");
    assert_eq!(
        fake.next_update().await["sessionUpdate"],
        "agent_thought_chunk"
    );
    let announced = fake.next_update().await;
    let permission = fake.next_request().await;
    permission
        .responder
        .respond(json!({"outcome": {"outcome": "selected", "optionId": "deny"}}))
        .unwrap();
    let failed = fake.next_update().await;
    assert_eq!(
        failed,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": announced["toolCallId"], "status": "failed"})
    );
    let answer = tokio::time::timeout(WAIT, prompt)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(answer, json!({"stopReason": "end_turn"}));
    assert!(server.calls().is_empty());

    assert!(fake.close().await.success());
    server.stop().await;
    let journal = fake_antigravity::journal::read_dir(&journal_dir).unwrap();
    let failures: Vec<_> = journal[0]
        .iter()
        .filter_map(|e| match e {
            JournalEntry::ExpectationFailed {
                turn,
                step,
                message,
            } => Some((*turn, *step, message.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!((failures[0].0, failures[0].1), (0, 2));
    assert!(
        failures[0].2.contains("selected `deny`"),
        "{}",
        failures[0].2
    );
}

#[tokio::test]
async fn an_unknown_tool_is_journaled_and_the_turn_goes_on() {
    let server = TestMcpServer::start().await;
    let ScriptedSession {
        dir: _dir,
        journal_dir,
        mut fake,
        session_id,
    } = scripted_session(SCRIPT, bridge(&server.url)).await;

    let answer = fake
        .request(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "call a missing tool"}]}),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!({"stopReason": "end_turn"}));
    assert_eq!(fake.next_update().await["content"]["text"], "went on");

    assert!(fake.close().await.success());
    server.stop().await;
    let journal = fake_antigravity::journal::read_dir(&journal_dir).unwrap();
    let messages: Vec<(usize, String)> = journal[0]
        .iter()
        .filter_map(|e| match e {
            JournalEntry::ExpectationFailed { step, message, .. } => Some((*step, message.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0].0, 0);
    assert!(messages[0].1.contains("nonexistent"), "{}", messages[0].1);
    assert!(
        messages[0].1.contains("echo_text \"Echo\""),
        "{}",
        messages[0].1
    );
    assert_eq!(messages[1].0, 1);
    assert!(messages[1].1.contains("did not run"), "{}", messages[1].1);
}

#[tokio::test]
async fn yolo_mode_is_not_asked_for_permission() {
    let server = TestMcpServer::start().await;
    let ScriptedSession {
        dir: _dir,
        mut fake,
        session_id,
        ..
    } = scripted_session(SCRIPT, bridge(&server.url)).await;
    fake.request(
        "session/set_mode",
        json!({"sessionId": session_id, "modeId": "yolo"}),
    )
    .await
    .unwrap();
    let answer = fake
        .request(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "use the echo tool"}]}),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!({"stopReason": "end_turn"}));
    let kinds: Vec<(String, String)> = [(); 5]
        .iter()
        .map(|()| fake.notifications.try_recv().unwrap().1["update"].clone())
        .map(|u| {
            (
                u["sessionUpdate"].as_str().unwrap().to_string(),
                u["status"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("agent_thought_chunk".into(), String::new()),
            ("tool_call".into(), "pending".into()),
            ("tool_call_update".into(), "in_progress".into()),
            ("tool_call_update".into(), "completed".into()),
            ("agent_message_chunk".into(), String::new()),
        ]
    );
    assert!(
        fake.requests.try_recv().is_err(),
        "no permission request in yolo"
    );
    assert_eq!(server.calls().len(), 1);
    assert!(fake.close().await.success());
    server.stop().await;
}
