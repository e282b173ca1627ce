//! `_meta.agy.disabledTools` (docs/antigravity-1.3.0.md §21), the fake alone over real
//! stdio: honoured (the default), a `native` step whose tool the session disabled is
//! withheld (no frame for it, nothing on disk, journaled) and the turn goes on; on
//! `session/resume` the new list applies; a session that disabled nothing, or a script
//! that says `disabled_tools: ignore`, runs the step for real.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use fake_antigravity::JournalEntry;
use serde_json::{Value, json};
use support::{FakeSession, prompt_answer, script_args, start_fake, write_script};

/// A turn whose native step really writes `target`, then says "after the write".
fn script(target: &Path, switch: &str) -> String {
    format!(
        r#"{switch}
turns:
  - steps:
      - native: {{tool: create_file, kind: edit, ask: false, path: {:?}, content: "written\n"}}
      - text: "after the write"
"#,
        // Debug quoting is a YAML double-quoted string: a Windows path's backslashes stay.
        target.display().to_string()
    )
}

struct Setup {
    dir: tempfile::TempDir,
    target: PathBuf,
    fake: FakeSession,
}

async fn start(switch: &str) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("planted.txt");
    let path = write_script(dir.path(), &script(&target, switch));
    let fake = start_fake(&script_args(&path, &dir.path().join("journal")), &[]).await;
    Setup { dir, target, fake }
}

/// Opens (or, with `resume`, resumes) a session with `meta` as its `_meta`, consuming
/// the `available_commands_update` that follows.
async fn open(fake: &mut FakeSession, meta: Value, resume: Option<&str>) -> String {
    let mut params = json!({"cwd": "/tmp", "mcpServers": [], "_meta": meta});
    let method = match resume {
        Some(id) => {
            params["sessionId"] = json!(id);
            "session/resume"
        }
        None => "session/new",
    };
    let opened = fake.request(method, params.clone()).await.unwrap();
    assert_eq!(
        fake.next_update().await["sessionUpdate"],
        "available_commands_update"
    );
    resume.map_or_else(
        || opened["sessionId"].as_str().unwrap().to_owned(),
        str::to_owned,
    )
}

fn disabling(names: &[&str]) -> Value {
    json!({"agy": {"disabledTools": names}})
}

/// Runs the turn; the first update it sends.
async fn first_update(fake: &mut FakeSession, session_id: &str) -> Value {
    let prompt = fake.start_prompt(session_id, "write it");
    let first = fake.next_update().await;
    if first["sessionUpdate"] == "tool_call" {
        assert_eq!(fake.next_update().await["status"], "completed");
        assert_eq!(
            fake.next_update().await["content"]["text"],
            "after the write"
        );
    }
    assert_eq!(prompt_answer(prompt).await["stopReason"], "end_turn");
    first
}

fn withheld(dir: &tempfile::TempDir) -> Vec<(String, String, usize, usize)> {
    let journal = fake_antigravity::journal::read_dir(&dir.path().join("journal")).unwrap();
    journal
        .into_iter()
        .flatten()
        .filter_map(|entry| match entry {
            JournalEntry::NativeStepWithheld {
                session_id,
                tool,
                turn,
                step,
            } => Some((session_id, tool, turn, step)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_disabled_native_step_is_withheld_and_the_turn_goes_on() {
    let mut s = start("").await;
    let session = open(
        &mut s.fake,
        disabling(&["unknown_tool", "create_file"]),
        None,
    )
    .await;
    let first = first_update(&mut s.fake, &session).await;
    assert_eq!(
        first,
        json!({"sessionUpdate": "agent_message_chunk",
               "content": {"type": "text", "text": "after the write"}}),
        "no tool_call, no permission request for a disabled tool"
    );
    assert!(!s.target.exists(), "a withheld step must not touch disk");
    s.fake.close().await;
    assert_eq!(
        withheld(&s.dir),
        [(session, "create_file".to_owned(), 0, 0)]
    );
}

#[tokio::test]
async fn resume_replaces_the_list_and_a_session_without_one_runs_the_step() {
    let mut s = start("").await;
    let session = open(&mut s.fake, json!({}), None).await;
    let first = first_update(&mut s.fake, &session).await;
    assert_eq!(first["title"], "Running create_file", "{first}");
    assert_eq!(std::fs::read_to_string(&s.target).unwrap(), "written\n");
    std::fs::remove_file(&s.target).unwrap();
    open(&mut s.fake, disabling(&["create_file"]), Some(&session)).await;
    let first = first_update(&mut s.fake, &session).await;
    assert_eq!(first["sessionUpdate"], "agent_message_chunk", "{first}");
    assert!(!s.target.exists());
    s.fake.close().await;
    assert_eq!(withheld(&s.dir).len(), 1);
}

#[tokio::test]
async fn a_build_that_ignores_the_list_runs_the_step() {
    let mut s = start("disabled_tools: ignore").await;
    let session = open(&mut s.fake, disabling(&["create_file"]), None).await;
    let first = first_update(&mut s.fake, &session).await;
    assert_eq!(first["title"], "Running create_file", "{first}");
    assert_eq!(std::fs::read_to_string(&s.target).unwrap(), "written\n");
    s.fake.close().await;
    assert!(withheld(&s.dir).is_empty());
}
