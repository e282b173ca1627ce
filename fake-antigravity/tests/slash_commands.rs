//! The slash commands 1.3.0 intercepts in prompts, over real stdio
//! (`prompt.slash_commands`): ignored by default; `leading` only at the prompt's start;
//! `paranoid` at any line's start of any text block. A `/logout` found is journaled
//! (`slash_command`), signs out as ACP `logout` does (token deleted, `auth.type` removed,
//! `settings_written`), and answers the prompt; a `/plan` is journaled and the turn runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use agent_client_protocol::ErrorCode;
use fake_antigravity::JournalEntry;
use fake_antigravity::turn::slash_commands::LOGOUT_REPLY;
use serde_json::{Value, json};
use support::{FakeSession, first_journal, script_args, start_fake, write_script};

/// A signed-in home: `auth.type` beside another key, and a token.
fn signed_in_home(home: &Path) {
    let state = home.join("antigravity-acp");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(
        state.join("settings.json"),
        r#"{"telemetry":false,"auth":{"type":"oauth-personal"}}"#,
    )
    .unwrap();
    std::fs::write(
        state.join("acp_token.json"),
        json!({"expiry_date": u64::MAX / 2}).to_string(),
    )
    .unwrap();
}

fn settings(home: &Path) -> Value {
    let text = std::fs::read_to_string(home.join("antigravity-acp/settings.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn token_exists(home: &Path) -> bool {
    home.join("antigravity-acp/acp_token.json").exists()
}

/// A fake signed in from `dir/home`, its script `auth: from-home` plus `switches`, with
/// one session open.
async fn start(dir: &Path, switches: &str) -> (FakeSession, String) {
    let home = dir.join("home");
    signed_in_home(&home);
    let script = write_script(dir, &format!("auth: from-home\n{switches}"));
    let home = home.display().to_string();
    let mut fake = start_fake(
        &script_args(&script, &dir.join("journal")),
        &[("GEMINI_HOME", home.as_str())],
    )
    .await;
    let session_id = fake.new_session(json!([])).await;
    (fake, session_id)
}

/// Prompts with `blocks` and returns the first chunk's text (the prompt answered
/// `end_turn`).
async fn prompt(fake: &mut FakeSession, session_id: &str, blocks: Value) -> String {
    let answer = fake
        .request(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": blocks}),
        )
        .await
        .unwrap();
    assert_eq!(answer["stopReason"], "end_turn");
    let update = fake.next_update().await;
    assert_eq!(update["sessionUpdate"], "agent_message_chunk");
    update["content"]["text"].as_str().unwrap().to_owned()
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

fn image() -> Value {
    json!({"type": "image", "data": "aGk=", "mimeType": "image/png"})
}

fn slash_commands(journal: &[JournalEntry]) -> Vec<(String, String)> {
    journal
        .iter()
        .filter_map(|entry| match entry {
            JournalEntry::SlashCommand {
                session_id,
                command,
            } => Some((session_id.clone(), command.clone())),
            _ => None,
        })
        .collect()
}

fn settings_writes(journal: &[JournalEntry]) -> Vec<(Option<String>, String)> {
    journal
        .iter()
        .filter_map(|entry| match entry {
            JournalEntry::SettingsWritten { auth_type, by } => {
                Some((auth_type.clone(), by.clone()))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn paranoid_runs_logout_from_any_line_and_journals_it() {
    for blocks in [
        json!([text("/logout")]),
        json!([text("earlier talk\n   /logout\nmore")]),
        json!([text("look at this"), image(), text("/logout")]),
        json!([text("a\r\n\t/LOGOUT now")]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let (mut fake, session_id) =
            start(dir.path(), "prompt: {slash_commands: paranoid}\n").await;
        assert_eq!(
            prompt(&mut fake, &session_id, blocks.clone()).await,
            LOGOUT_REPLY,
            "{blocks}"
        );
        assert!(!token_exists(&home), "{blocks}");
        assert_eq!(settings(&home), json!({"telemetry": false}), "{blocks}");
        let refused = fake
            .request("session/new", json!({"cwd": "/tmp", "mcpServers": []}))
            .await
            .unwrap_err();
        assert_eq!(
            refused.code,
            ErrorCode::AUTH_REQUIRED,
            "signed out: {blocks}"
        );
        assert!(fake.close().await.success());
        let journal = first_journal(&dir.path().join("journal"));
        assert_eq!(
            slash_commands(&journal),
            [(session_id.clone(), "logout".to_owned())],
            "{blocks}"
        );
        assert_eq!(
            settings_writes(&journal),
            [(None, "/logout".to_owned())],
            "{blocks}"
        );
    }
}

#[tokio::test]
async fn by_default_a_slash_is_only_text() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let (mut fake, session_id) = start(dir.path(), "").await;
    let echoed = prompt(&mut fake, &session_id, json!([text("/logout")])).await;
    assert_eq!(echoed, "/logout", "the default profile echoes it");
    assert!(token_exists(&home));
    assert_eq!(settings(&home)["auth"]["type"], "oauth-personal");
    fake.new_session(json!([])).await;
    assert!(fake.close().await.success());
    let journal = first_journal(&dir.path().join("journal"));
    assert!(slash_commands(&journal).is_empty());
    assert!(settings_writes(&journal).is_empty());
}

#[tokio::test]
async fn leading_intercepts_only_at_the_prompt_start() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let (mut fake, session_id) = start(dir.path(), "prompt: {slash_commands: leading}\n").await;
    let later_line = json!([text("hello\n/logout")]);
    assert_eq!(
        prompt(&mut fake, &session_id, later_line).await,
        "hello\n/logout"
    );
    assert!(token_exists(&home));
    let at_start = json!([image(), text("  /logout")]);
    assert_eq!(prompt(&mut fake, &session_id, at_start).await, LOGOUT_REPLY);
    assert!(!token_exists(&home));
    assert!(fake.close().await.success());
    let journal = first_journal(&dir.path().join("journal"));
    assert_eq!(slash_commands(&journal).len(), 1);
}

#[tokio::test]
async fn plan_is_journaled_and_the_scripted_turn_runs() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let switches = "prompt: {slash_commands: paranoid}\nturns:\n  - steps: [{text: planned}]\n";
    let (mut fake, session_id) = start(dir.path(), switches).await;
    let answer = prompt(
        &mut fake,
        &session_id,
        json!([text("/plan build the thing")]),
    )
    .await;
    assert_eq!(answer, "planned");
    assert!(token_exists(&home), "still signed in");
    fake.new_session(json!([])).await;
    assert!(fake.close().await.success());
    let journal = first_journal(&dir.path().join("journal"));
    assert_eq!(slash_commands(&journal), [(session_id, "plan".to_owned())]);
    assert!(settings_writes(&journal).is_empty());
}
