//! The conversation files 1.3.0 keeps per session (B08), over real stdio: every
//! `session/new` writes `conversations/<id>.db`, `.db-wal`, `.db-shm`, `.meta` and
//! `brain/<id>/` under `$GEMINI_HOME/antigravity-acp/` before it is answered, and every
//! prompt appends its text to `<id>.db-wal`; nothing is written without `GEMINI_HOME`,
//! with `session_new.conversation_files: false`, or for a refused `session/new`; a
//! home it cannot write into leaves the sessions working. The SQLite files are held open
//! while the fake runs, and one pulled from under it is journaled at the next look.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use fake_antigravity::JournalEntry;
use serde_json::{Value, json};
use support::{FakeSession, first_journal, script_args, start_fake, write_script};

const SUFFIXES: [&str; 4] = [".db", ".db-wal", ".db-shm", ".meta"];

fn conversation(home: &Path, session_id: &str, suffix: &str) -> PathBuf {
    home.join("antigravity-acp/conversations")
        .join(format!("{session_id}{suffix}"))
}

fn brain(home: &Path, session_id: &str) -> PathBuf {
    home.join("antigravity-acp/brain").join(session_id)
}

/// Starts the fake on `script` with `envs`, journaling into `dir/journal`.
async fn start(dir: &Path, script: &str, envs: &[(&str, &str)]) -> FakeSession {
    let script = write_script(dir, script);
    start_fake(&script_args(&script, &dir.join("journal")), envs).await
}

/// Opens a session in `cwd` and returns its id (the commands update consumed).
async fn open_in(fake: &mut FakeSession, cwd: &str) -> String {
    let opened = fake
        .request("session/new", json!({"cwd": cwd, "mcpServers": []}))
        .await
        .unwrap();
    assert_eq!(
        fake.next_update().await["sessionUpdate"],
        "available_commands_update"
    );
    opened["sessionId"].as_str().unwrap().to_owned()
}

/// Prompts and returns the echo (the default profile's one chunk).
async fn prompt(fake: &mut FakeSession, session_id: &str, blocks: Value) -> Value {
    let answer = fake
        .request(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": blocks}),
        )
        .await
        .unwrap();
    assert_eq!(answer["stopReason"], "end_turn");
    fake.next_update().await["content"]["text"].clone()
}

#[tokio::test]
async fn every_session_new_writes_its_files_and_every_prompt_grows_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("gemini-home");
    let home_text = home.display().to_string();
    let mut fake = start(dir.path(), "", &[("GEMINI_HOME", &home_text)]).await;
    fake.request("initialize", json!({"protocolVersion": 1}))
        .await
        .unwrap();

    let first = open_in(&mut fake, "/work/project").await;
    // On disk by the time the answer arrived.
    for suffix in SUFFIXES {
        assert!(
            conversation(&home, &first, suffix).is_file(),
            "{first}{suffix}"
        );
    }
    let meta = std::fs::read_to_string(conversation(&home, &first, ".meta")).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&meta).unwrap(),
        json!({"cwd": "/work/project"})
    );
    assert!(
        std::fs::read_dir(brain(&home, &first))
            .unwrap()
            .next()
            .is_some(),
        "brain/<id>/ holds a file: only a recursive removal takes it"
    );
    assert_eq!(
        std::fs::read(conversation(&home, &first, ".db-wal")).unwrap(),
        b""
    );

    let image = json!({"type": "image", "data": "aGk=", "mimeType": "image/png"});
    prompt(
        &mut fake,
        &first,
        json!([{"type": "text", "text": "HISTORY-1"}, image, {"type": "text", "text": "ASK-1"}]),
    )
    .await;
    let wal = conversation(&home, &first, ".db-wal");
    assert_eq!(std::fs::read_to_string(&wal).unwrap(), "HISTORY-1\nASK-1\n");
    prompt(
        &mut fake,
        &first,
        json!([{"type": "text", "text": "ASK-2"}]),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(&wal).unwrap(),
        "HISTORY-1\nASK-1\nASK-2\n",
        "the history grows"
    );

    let second = open_in(&mut fake, "/elsewhere").await;
    assert_ne!(first, second);
    for suffix in SUFFIXES {
        assert!(conversation(&home, &second, suffix).is_file());
    }
    assert!(brain(&home, &second).is_dir());
    assert!(fake.close().await.success());
}

/// The files a home holds under `antigravity-acp/conversations` and `brain`.
fn written(home: &Path) -> Vec<String> {
    ["antigravity-acp/conversations", "antigravity-acp/brain"]
        .iter()
        .filter_map(|sub| std::fs::read_dir(home.join(sub)).ok())
        .flatten()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[tokio::test]
async fn nothing_is_written_without_gemini_home_when_switched_off_or_when_refused() {
    let dir = tempfile::tempdir().unwrap();
    // No GEMINI_HOME: the fake resolves `$HOME/.gemini` (here a scratch HOME) and must
    // leave it alone.
    let user_home = dir.path().join("user");
    std::fs::create_dir_all(&user_home).unwrap();
    let user_text = user_home.display().to_string();
    let mut fake = start(dir.path(), "", &[("HOME", &user_text)]).await;
    let id = open_in(&mut fake, "/tmp").await;
    prompt(&mut fake, &id, json!([{"type": "text", "text": "hi"}])).await;
    assert!(fake.close().await.success());
    assert!(
        !user_home.join(".gemini").exists(),
        "the real home untouched"
    );

    // The switch off.
    let home = dir.path().join("off");
    let home_text = home.display().to_string();
    let script = "session_new: { conversation_files: false }\n";
    let mut fake = start(dir.path(), script, &[("GEMINI_HOME", &home_text)]).await;
    let id = open_in(&mut fake, "/tmp").await;
    prompt(&mut fake, &id, json!([{"type": "text", "text": "hi"}])).await;
    assert!(fake.close().await.success());
    assert_eq!(written(&home), Vec::<String>::new());

    // Refused: bad params, then not signed in.
    let home = dir.path().join("refused");
    let home_text = home.display().to_string();
    let fake = start(
        dir.path(),
        "auth: required\n",
        &[("GEMINI_HOME", &home_text)],
    )
    .await;
    let bad = fake
        .request("session/new", json!({"cwd": 3, "mcpServers": []}))
        .await;
    assert!(bad.is_err());
    let unsigned = fake
        .request("session/new", json!({"cwd": "/tmp", "mcpServers": []}))
        .await;
    assert!(unsigned.is_err());
    assert!(fake.close().await.success());
    assert_eq!(written(&home), Vec::<String>::new());
}

/// A home the server cannot write into (a confined server's; here `antigravity-acp` is a
/// file, which stops root too): the failure is logged and sessions open and answer.
#[tokio::test]
async fn an_unwritable_home_is_logged_and_sessions_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("unwritable");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("antigravity-acp"), "not a folder").unwrap();
    let home_text = home.display().to_string();
    let mut fake = start(dir.path(), "", &[("GEMINI_HOME", &home_text)]).await;
    let id = open_in(&mut fake, "/tmp").await;
    let echo = prompt(
        &mut fake,
        &id,
        json!([{"type": "text", "text": "still answered"}]),
    )
    .await;
    assert_eq!(echo, "still answered");
    assert!(fake.close().await.success());
}

/// The `conversation_file_vanished` entries of the first fake's journal, as
/// `(file, noticed_at)`.
fn vanished(dir: &Path) -> Vec<(String, String)> {
    first_journal(&dir.join("journal"))
        .into_iter()
        .filter_map(|entry| match entry {
            JournalEntry::ConversationFileVanished {
                file, noticed_at, ..
            } => Some((file, noticed_at)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_held_file_pulled_from_under_the_live_fake_is_journaled_at_its_next_look() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("gemini-home");
    let home_text = home.display().to_string();
    let mut fake = start(dir.path(), "", &[("GEMINI_HOME", &home_text)]).await;
    let first = open_in(&mut fake, "/work/project").await;
    prompt(&mut fake, &first, json!([{"type": "text", "text": "hi"}])).await;
    let second = open_in(&mut fake, "/work/project").await;
    assert_eq!(vanished(dir.path()), [], "nothing vanished yet");

    std::fs::remove_file(conversation(&home, &first, ".db-wal")).unwrap();
    prompt(&mut fake, &second, json!([{"type": "text", "text": "hi"}])).await;
    let wal = format!("antigravity-acp/conversations/{first}.db-wal");
    assert_eq!(
        vanished(dir.path()),
        [(wal.clone(), "session/prompt".to_owned())]
    );

    // Removed as the process is being stopped: noticed as it exits.
    std::fs::remove_file(conversation(&home, &second, ".db")).unwrap();
    assert!(fake.close().await.success());
    let db = format!("antigravity-acp/conversations/{second}.db");
    assert_eq!(
        vanished(dir.path()),
        [(wal, "session/prompt".to_owned()), (db, "exit".to_owned())]
    );
}

#[tokio::test]
async fn files_removed_after_the_fake_exited_or_never_held_are_not_journaled() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("gemini-home");
    let home_text = home.display().to_string();
    let script = "session_new: { hold_conversation_files: false }\n";
    let mut fake = start(dir.path(), script, &[("GEMINI_HOME", &home_text)]).await;
    let id = open_in(&mut fake, "/tmp").await;
    std::fs::remove_file(conversation(&home, &id, ".db")).unwrap();
    prompt(&mut fake, &id, json!([{"type": "text", "text": "hi"}])).await;
    assert!(fake.close().await.success());
    assert_eq!(vanished(dir.path()), [], "not held: not watched");

    let held = tempfile::tempdir().unwrap();
    let home = held.path().join("gemini-home");
    let home_text = home.display().to_string();
    let mut fake = start(held.path(), "", &[("GEMINI_HOME", &home_text)]).await;
    let id = open_in(&mut fake, "/tmp").await;
    assert!(fake.close().await.success());
    for suffix in SUFFIXES {
        std::fs::remove_file(conversation(&home, &id, suffix)).unwrap();
    }
    assert_eq!(
        vanished(held.path()),
        [],
        "removed once the process was gone"
    );
}
