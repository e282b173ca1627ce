//! The steps where the server acts on its own: `native` (asked and allowed, asked and
//! refused, run without asking, yolo), `question` and `foreign_call`, each in its 1.3.0
//! wire shape over real stdio, each letting the turn go on whatever the answer, and each
//! stopped by `session/cancel`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use agent_client_protocol::UntypedMessage;
use agent_client_protocol::v1::schema::RequestPermissionRequest;
use fake_antigravity::JournalEntry;
use serde_json::{Value, json};
use support::{FakeSession, prompt_answer, script_args, start_fake, write_script};

const SCRIPT: &str = r#"
turns:
  - match: {prompt_contains: "run a command"}
    steps:
      - native: {tool: run_command}
      - text: "after the command"
  - match: {prompt_contains: "read quietly"}
    steps:
      - native: {tool: view_file, kind: read, ask: false}
      - text: "after the read"
  - match: {prompt_contains: "ask me"}
    steps:
      - question: {title: "Which result label should be used?", options: [Verified, Needs review]}
      - text: "after the question"
  - match: {prompt_contains: "use the other server"}
    steps:
      - foreign_call: {server: other-server, tool: wipe_disk, args: {path: "/"}}
      - text: "after the foreign call"
"#;

const CANCELLED: &str = r#"{"outcome": {"outcome": "cancelled"}}"#;

fn selected(option: &str) -> Value {
    json!({"outcome": {"outcome": "selected", "optionId": option}})
}

async fn start(dir: &tempfile::TempDir) -> (FakeSession, String) {
    let script = write_script(dir.path(), SCRIPT);
    let mut fake = start_fake(&script_args(&script, &dir.path().join("journal")), &[]).await;
    let session_id = fake.new_session(json!([])).await;
    (fake, session_id)
}

fn journal(dir: &tempfile::TempDir) -> Vec<JournalEntry> {
    let mut journal = fake_antigravity::journal::read_dir(&dir.path().join("journal")).unwrap();
    journal.remove(0)
}

fn is_hex32(id: &Value) -> bool {
    id.as_str()
        .is_some_and(|s| s.len() == 32 && s.chars().all(|c| c.is_ascii_hexdigit()))
}

#[tokio::test]
async fn an_asked_native_tool_runs_when_allowed_and_fails_when_refused_and_the_turn_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (mut fake, session_id) = start(&dir).await;
    for answer in [
        selected("allow_always"),
        selected("allow"),
        selected("deny"),
        serde_json::from_str(CANCELLED).unwrap(),
    ] {
        let prompt = fake.start_prompt(&session_id, "please run a command");
        let pending = fake.next_update().await;
        let id = pending["toolCallId"].clone();
        assert!(is_hex32(&id), "{pending}");
        assert_eq!(
            pending,
            json!({"sessionUpdate": "tool_call", "toolCallId": id, "title": "Run run_command?",
                   "kind": "execute", "status": "pending", "rawInput": {}})
        );
        let permission = fake.next_request().await;
        assert_eq!(permission.method, "session/request_permission");
        serde_json::from_value::<RequestPermissionRequest>(permission.params.clone()).unwrap();
        let mut tool_call = pending.clone();
        tool_call.as_object_mut().unwrap().remove("sessionUpdate");
        assert_eq!(permission.params["toolCall"], tool_call, "no _meta.mcp");
        let options = &permission.params["options"];
        assert_eq!(
            options[0],
            json!({"optionId": "allow", "name": "Allow", "kind": "allow_once"})
        );
        assert_eq!(
            (&options[1]["optionId"], &options[1]["kind"]),
            (&json!("allow_always"), &json!("allow_always"))
        );
        let warning = &options[1]["_meta"]["agy.security.warning"];
        assert!(
            warning["title"].is_string() && warning["message"].is_string(),
            "{warning}"
        );
        assert_eq!(
            options[2],
            json!({"optionId": "deny", "name": "Deny", "kind": "reject_once"})
        );
        let allowed = answer["outcome"]["optionId"]
            .as_str()
            .is_some_and(|o| o.starts_with("allow"));
        permission.responder.respond(answer).unwrap();

        if allowed {
            assert_eq!(
                fake.next_update().await,
                json!({"sessionUpdate": "tool_call_update", "toolCallId": id,
                       "status": "in_progress", "title": "Running run_command"})
            );
        }
        let status = if allowed { "completed" } else { "failed" };
        assert_eq!(
            fake.next_update().await,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": status})
        );
        assert_eq!(
            fake.next_update().await["content"]["text"],
            "after the command"
        );
        assert_eq!(
            prompt_answer(prompt).await,
            json!({"stopReason": "end_turn"})
        );
    }
    assert!(fake.close().await.success());
}

#[tokio::test]
async fn an_unasked_native_tool_just_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (mut fake, session_id) = start(&dir).await;
    let prompt = fake.start_prompt(&session_id, "read quietly");
    assert_eq!(
        prompt_answer(prompt).await,
        json!({"stopReason": "end_turn"})
    );
    let running = fake.next_update().await;
    let id = running["toolCallId"].clone();
    assert!(is_hex32(&id), "{running}");
    assert_eq!(
        running,
        json!({"sessionUpdate": "tool_call", "toolCallId": id, "title": "Running view_file",
               "kind": "read", "status": "in_progress", "rawInput": {}})
    );
    assert_eq!(
        fake.next_update().await,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "completed"})
    );
    assert_eq!(
        fake.next_update().await["content"]["text"],
        "after the read"
    );
    assert!(fake.requests.try_recv().is_err(), "nobody was asked");

    // In yolo mode an asking native tool runs without asking too.
    fake.request(
        "session/set_mode",
        json!({"sessionId": session_id, "modeId": "yolo"}),
    )
    .await
    .unwrap();
    let prompt = fake.start_prompt(&session_id, "run a command");
    assert_eq!(
        prompt_answer(prompt).await,
        json!({"stopReason": "end_turn"})
    );
    let running = fake.next_update().await;
    assert_eq!(
        (&running["status"], &running["title"]),
        (&json!("in_progress"), &json!("Running run_command"))
    );
    assert_eq!(fake.next_update().await["status"], "completed");
    assert!(
        fake.requests.try_recv().is_err(),
        "nobody was asked in yolo"
    );
    assert!(fake.close().await.success());
}

#[tokio::test]
async fn a_question_is_asked_with_numbered_answers_and_any_answer_lets_the_turn_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let (mut fake, session_id) = start(&dir).await;
    for answer in [selected("2"), serde_json::from_str(CANCELLED).unwrap()] {
        let prompt = fake.start_prompt(&session_id, "ask me");
        let question = fake.next_request().await;
        assert_eq!(question.method, "session/request_permission");
        serde_json::from_value::<RequestPermissionRequest>(question.params.clone()).unwrap();
        let id = question.params["toolCall"]["toolCallId"]
            .as_str()
            .unwrap()
            .to_string();
        let hex = id.strip_prefix("interaction_").unwrap();
        assert!(
            hex.len() == 8 && hex.chars().all(|c| c.is_ascii_hexdigit()),
            "{id}"
        );
        assert_eq!(
            question.params,
            json!({
                "sessionId": session_id,
                "toolCall": {"toolCallId": id, "status": "pending",
                             "title": "Which result label should be used?", "rawInput": {}},
                "options": [
                    {"optionId": "1", "name": "Verified", "kind": "allow_once"},
                    {"optionId": "2", "name": "Needs review", "kind": "allow_once"}
                ]
            })
        );
        question.responder.respond(answer).unwrap();
        assert_eq!(
            prompt_answer(prompt).await,
            json!({"stopReason": "end_turn"})
        );
        let next = fake.next_update().await;
        assert_eq!(
            next["content"]["text"], "after the question",
            "no tool_call update: {next}"
        );
    }
    assert!(fake.close().await.success());
    let answers: Vec<Value> = journal(&dir)
        .into_iter()
        .filter_map(|e| match e {
            JournalEntry::AcpIn { frame }
                if frame
                    .get("result")
                    .is_some_and(|r| r.get("outcome").is_some()) =>
            {
                Some(frame["result"]["outcome"].clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        answers,
        [
            json!({"outcome": "selected", "optionId": "2"}),
            json!({"outcome": "cancelled"})
        ]
    );
}

#[tokio::test]
async fn a_foreign_call_names_the_other_server_makes_no_mcp_request_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (mut fake, session_id) = start(&dir).await;
    for answer in [serde_json::from_str(CANCELLED).unwrap(), selected("allow")] {
        let prompt = fake.start_prompt(&session_id, "use the other server");
        let pending = fake.next_update().await;
        let id = pending["toolCallId"].clone();
        assert!(is_hex32(&id), "{pending}");
        assert_eq!(
            pending,
            json!({"sessionUpdate": "tool_call", "toolCallId": id, "title": "other-server_wipe_disk",
                   "kind": "other", "status": "pending", "content": [],
                   "rawInput": {"arguments": {"path": "/"}},
                   "_meta": {"mcp": {"tool": "wipe_disk", "server": "other-server"}, "is_mcp_tool_call": true}})
        );
        let permission = fake.next_request().await;
        assert_eq!(
            permission.params["options"],
            json!([{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                   {"optionId": "deny", "name": "Deny", "kind": "reject_once"}])
        );
        let allowed = answer["outcome"]["optionId"] == "allow";
        permission.responder.respond(answer).unwrap();
        if allowed {
            assert_eq!(fake.next_update().await["status"], "in_progress");
        }
        let finished = fake.next_update().await;
        assert_eq!(finished["toolCallId"], id);
        assert_eq!(
            finished["status"],
            if allowed { "completed" } else { "failed" }
        );
        assert_eq!(
            fake.next_update().await["content"]["text"],
            "after the foreign call"
        );
        assert_eq!(
            prompt_answer(prompt).await,
            json!({"stopReason": "end_turn"})
        );
    }
    assert!(fake.close().await.success());
    let entries = journal(&dir);
    assert!(
        !entries
            .iter()
            .any(|e| matches!(e, JournalEntry::McpRequest { .. })),
        "no MCP request is ever made"
    );
    assert!(
        !entries
            .iter()
            .any(|e| matches!(e, JournalEntry::ExpectationFailed { .. }))
    );
}

#[tokio::test]
async fn cancel_while_a_native_tool_or_a_question_is_asked_answers_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let (mut fake, session_id) = start(&dir).await;
    for text in ["run a command", "ask me", "use the other server"] {
        let prompt = fake.start_prompt(&session_id, text);
        let asked = fake.next_request().await;
        let cancel =
            UntypedMessage::new("session/cancel", json!({"sessionId": session_id})).unwrap();
        fake.cx.send_notification(cancel).unwrap();
        assert_eq!(
            prompt_answer(prompt).await,
            json!({"stopReason": "cancelled"}),
            "{text}"
        );
        asked
            .responder
            .respond(serde_json::from_str(CANCELLED).unwrap())
            .unwrap();
        // Only the announcement (if any) went out: no failed update, no text.
        while let Ok((_, params)) = fake.notifications.try_recv() {
            assert_eq!(params["update"]["status"], "pending", "{text}: {params}");
        }
    }
    assert!(fake.close().await.success());
}

/// A native tool's real actions are journaled with their real outcomes: a read that
/// worked (`done`), one of a missing file (`failed`, with the OS error, and the tool call
/// `failed`), and a signal to the fake's parent (`kill(ppid, 0)`: `done` for an unconfined
/// fake, whose parent is this test).
#[tokio::test]
async fn native_actions_are_journaled_with_their_real_outcomes() {
    let dir = tempfile::tempdir().unwrap();
    let present = dir.path().join("present.txt");
    std::fs::write(&present, "the content").unwrap();
    let missing = dir.path().join("missing.txt");
    let script = format!(
        r#"
turns:
  - match: {{prompt_contains: "read"}}
    steps:
      - native: {{tool: view_file, kind: read, ask: false, path: {:?}}}
      - native: {{tool: view_file, kind: read, ask: false, path: {:?}, signal: parent}}
      - text: "after the reads"
"#,
        // Debug quoting is a YAML double-quoted string: a Windows path's backslashes stay.
        present.display().to_string(),
        missing.display().to_string()
    );
    let script = write_script(dir.path(), &script);
    let mut fake = start_fake(&script_args(&script, &dir.path().join("journal")), &[]).await;
    let session_id = fake.new_session(json!([])).await;
    let prompt = fake.start_prompt(&session_id, "read");
    assert_eq!(
        prompt_answer(prompt).await,
        json!({"stopReason": "end_turn"})
    );
    let mut statuses = Vec::new();
    loop {
        let update = fake.next_update().await;
        if update["sessionUpdate"] == "agent_message_chunk" {
            break;
        }
        if update["sessionUpdate"] == "tool_call_update" {
            statuses.push(update["status"].clone());
        }
    }
    assert_eq!(statuses, [json!("completed"), json!("failed")]);
    assert!(fake.close().await.success());
    let actions: Vec<_> = journal(&dir)
        .into_iter()
        .filter_map(|entry| match entry {
            JournalEntry::NativeAction {
                action,
                target,
                outcome,
                error,
                ..
            } => Some((action, target, outcome, error.is_some())),
            _ => None,
        })
        .collect();
    assert_eq!(
        actions,
        [
            (
                "read".into(),
                present.display().to_string(),
                "done".into(),
                false
            ),
            (
                "read".into(),
                missing.display().to_string(),
                "failed".into(),
                true
            ),
            ("signal".into(), "parent".into(), "done".into(), false),
        ]
    );
}
