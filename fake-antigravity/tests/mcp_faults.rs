//! The MCP client faults (`mcp_client.fault`) against a plain rmcp server on loopback (no
//! adapter): what each sends, that the journal records every request and every
//! response with its JSON-RPC id, and that a fault journals `McpFaultApplied` once it
//! acted, and never when its call does not come.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use fake_antigravity::JournalEntry;
use serde_json::{Value, json};
use support::mcp_server::TestMcpServer;
use support::{ScriptedSession, prompt_answer, scripted_session};

fn script(kind: &str, call: usize) -> String {
    format!(
        r#"
mcp_client: {{ fault: {{ kind: {kind}, call: {call} }} }}
turns:
  - match: {{prompt_contains: "echo"}}
    steps:
      - call: {{tool: Echo, args: {{text: "PROBE"}}}}
      - text: "done"
"#
    )
}

fn bridge(url: &str) -> Value {
    json!([{"type": "http", "name": "dsh", "url": url,
            "headers": [{"name": "Authorization", "value": "Bearer t0k"}]}])
}

/// The `tools/call` requests and responses journaled, as `(rpc_id, answer)` pairs:
/// `request`, or the response's `ok`/`error: …`.
fn tool_calls(journal_dir: &std::path::Path) -> Vec<(Option<u64>, String)> {
    let journal = fake_antigravity::journal::read_dir(journal_dir).unwrap_or_default();
    journal
        .into_iter()
        .flatten()
        .filter_map(|entry| match entry {
            JournalEntry::McpRequest { method, rpc_id, .. } if method == "tools/call" => {
                Some((rpc_id, "request".to_owned()))
            }
            JournalEntry::McpResponse {
                method,
                rpc_id,
                result,
                error,
                ..
            } if method == "tools/call" => Some((
                rpc_id,
                match (result, error) {
                    (Some(_), _) => "ok".to_owned(),
                    (None, error) => format!("error: {}", error.unwrap_or_default()),
                },
            )),
            _ => None,
        })
        .collect()
}

/// Runs one prompt in yolo mode (no permission asked) under the fault `kind`, waits
/// (bounded) until at least `entries` `tools/call` requests and responses are journaled
/// (a replay after the prompt's result may still be on its way), and returns them.
async fn run(kind: &str, server: &TestMcpServer, entries: usize) -> Vec<(Option<u64>, String)> {
    run_at(kind, 0, server, entries).await.0
}

/// [`run`] with the fault at `call`; also returns the `McpFaultApplied` entries.
async fn run_at(
    kind: &str,
    call: usize,
    server: &TestMcpServer,
    entries: usize,
) -> (Vec<(Option<u64>, String)>, Vec<(String, usize, String)>) {
    let ScriptedSession {
        dir: _dir,
        journal_dir,
        fake,
        session_id,
    } = scripted_session(&script(kind, call), bridge(&server.url)).await;
    fake.request(
        "session/set_mode",
        json!({"sessionId": session_id, "modeId": "yolo"}),
    )
    .await
    .unwrap();
    let prompt = fake.start_prompt(&session_id, "please echo");
    assert_eq!(
        prompt_answer(prompt).await,
        json!({"stopReason": "end_turn"})
    );
    let started = std::time::Instant::now();
    while tool_calls(&journal_dir).len() < entries && started.elapsed() < support::WAIT {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    fake.close().await;
    (tool_calls(&journal_dir), faults_applied(&journal_dir))
}

/// The `McpFaultApplied` entries journaled, as `(fault, call, server)`.
fn faults_applied(journal_dir: &std::path::Path) -> Vec<(String, usize, String)> {
    let journal = fake_antigravity::journal::read_dir(journal_dir).unwrap_or_default();
    journal
        .into_iter()
        .flatten()
        .filter_map(|entry| match entry {
            JournalEntry::McpFaultApplied {
                fault,
                call,
                server,
                effect,
            } => {
                assert!(!effect.is_empty(), "{fault}: no effect");
                Some((fault, call, server))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn every_fault_journals_once_that_it_acted() {
    // The `tools/call` entries each kind leaves (see the tests below).
    for (kind, entries) in [
        ("disconnect_mid_call", 2),
        ("call_twice", 4),
        ("call_after_turn", 4),
        ("stale_token", 2),
        ("burst", 130),
        ("reset_while_result", 2),
    ] {
        let server = TestMcpServer::start().await;
        let (_, applied) = run_at(kind, 0, &server, entries).await;
        assert_eq!(applied, [(kind.to_owned(), 0, "dsh".to_owned())], "{kind}");
        server.stop().await;
    }
}

#[tokio::test]
async fn a_fault_whose_call_never_comes_journals_nothing() {
    let server = TestMcpServer::start().await;
    // The script makes one call (index 0): the fault at call 1 never strikes.
    let (seen, applied) = run_at("call_twice", 1, &server, 2).await;
    assert_eq!(server.calls().len(), 1, "{seen:?}");
    assert_eq!(applied, []);
    server.stop().await;
}

#[tokio::test]
async fn call_twice_sends_one_id_twice_and_journals_both_answers() {
    let server = TestMcpServer::start().await;
    let mut seen = run("call_twice", &server, 4).await;
    // A plain server answers both: the journal shows one id answered twice.
    assert_eq!(server.calls().len(), 2);
    let id = seen[0].0;
    assert!(id.is_some());
    assert!(seen.iter().all(|(rpc_id, _)| *rpc_id == id), "{seen:?}");
    seen.sort_by(|a, b| a.1.cmp(&b.1));
    let answers: Vec<&str> = seen.iter().map(|(_, a)| a.as_str()).collect();
    assert_eq!(answers, ["ok", "ok", "request", "request"]);
    server.stop().await;
}

#[tokio::test]
async fn stale_token_without_an_earlier_session_sends_a_token_nobody_issued() {
    let server = TestMcpServer::start().await;
    run("stale_token", &server, 2).await;
    let calls = server.calls();
    assert_eq!(calls.len(), 1);
    let sent = calls[0].authorization.clone().unwrap_or_default();
    assert_ne!(sent, "Bearer t0k");
    assert!(
        sent.starts_with("Bearer ") && sent.len() == 7 + 64,
        "{sent}"
    );
    server.stop().await;
}

#[tokio::test]
async fn burst_sends_65_calls_with_their_own_ids() {
    let server = TestMcpServer::start().await;
    let seen = run("burst", &server, 130).await;
    assert_eq!(server.calls().len(), 65);
    let mut answered: Vec<u64> = seen
        .iter()
        .filter(|(_, a)| a == "ok")
        .filter_map(|(id, _)| *id)
        .collect();
    answered.sort_unstable();
    answered.dedup();
    assert_eq!(answered.len(), 65, "{seen:?}");
    server.stop().await;
}

#[tokio::test]
async fn disconnect_and_reset_fail_the_call_and_the_turn_goes_on() {
    for (kind, text) in [
        ("disconnect_mid_call", "disconnected by the client"),
        ("reset_while_result", "reset by the client"),
    ] {
        let server = TestMcpServer::start().await;
        let seen = run(kind, &server, 2).await;
        assert_eq!(seen.len(), 2, "{kind}: {seen:?}");
        assert_eq!(seen[0].1, "request");
        assert!(seen[1].1.contains(text), "{kind}: {seen:?}");
        assert_eq!(seen[0].0, seen[1].0);
        server.stop().await;
    }
}

#[tokio::test]
async fn call_after_turn_replays_the_request_once_the_prompt_is_answered() {
    let server = TestMcpServer::start().await;
    let seen = run("call_after_turn", &server, 4).await;
    assert_eq!(server.calls().len(), 2, "{seen:?}");
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(seen.iter().all(|(id, _)| *id == seen[0].0), "{seen:?}");
    server.stop().await;
}
