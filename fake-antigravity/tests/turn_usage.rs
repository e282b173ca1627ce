//! The end-of-turn `usage_update` (`turn_usage`), the fake alone over real stdio: on by
//! default, after the turn's text and before the prompt's answer, as the real 1.3.0 server
//! sent it on a plain text turn (docs/antigravity-1.3.0.md §13); off with
//! `turn_usage: {enabled: false}`; a turn with scripted `usage` steps sends only those.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use support::{FakeSession, prompt_answer, script_args, start_fake, write_script};

/// Runs `script`, prompts `text` once, and returns every `session/update` of the prompt
/// in order (every notification before the answer), then the answer.
async fn one_prompt(script: &str, text: &str) -> (Vec<Value>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_script(dir.path(), script);
    let mut fake: FakeSession =
        start_fake(&script_args(&path, &dir.path().join("journal")), &[]).await;
    let session = fake.new_session(json!([])).await;
    let prompt = fake.start_prompt(&session, text);
    let answer = prompt_answer(prompt).await;
    let mut updates = Vec::new();
    while let Ok(Some((_, params))) = tokio::time::timeout(
        std::time::Duration::from_millis(200),
        fake.notifications.recv(),
    )
    .await
    {
        updates.push(params["update"].clone());
    }
    (updates, answer)
}

fn kinds(updates: &[Value]) -> Vec<&str> {
    updates
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap_or("?"))
        .collect()
}

#[tokio::test]
async fn a_plain_text_turn_ends_with_a_usage_update_after_its_text() {
    let (updates, answer) = one_prompt("turns: [{steps: [{text: \"ACP_OK\"}]}]\n", "Say it").await;
    assert_eq!(kinds(&updates), ["agent_message_chunk", "usage_update"]);
    assert_eq!(updates[1]["size"], 1_048_576);
    assert!(updates[1]["used"].as_u64().unwrap() >= 1);
    assert_eq!(answer, json!({"stopReason": "end_turn"}));
}

#[tokio::test]
async fn the_end_of_turn_usage_can_be_turned_off() {
    let script = "turn_usage: {enabled: false}\nturns: [{steps: [{text: \"ACP_OK\"}]}]\n";
    let (updates, _) = one_prompt(script, "Say it").await;
    assert_eq!(kinds(&updates), ["agent_message_chunk"]);
}

#[tokio::test]
async fn scripted_usage_steps_replace_the_default() {
    let script = "turns: [{steps: [{text: \"hi\"}, {usage: {used: 7, size: 200000}}]}]\n";
    let (updates, _) = one_prompt(script, "Say it").await;
    assert_eq!(kinds(&updates), ["agent_message_chunk", "usage_update"]);
    assert_eq!(
        updates[1],
        json!({"sessionUpdate": "usage_update", "used": 7, "size": 200000})
    );
}
