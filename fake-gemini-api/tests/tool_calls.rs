//! Call segments and their follow-ups (results in a `user` or a `model` content),
//! `expect_result`, parallel calls, tool name resolution and withheld natives.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use fake_gemini_api::JournalEntry;
use serde_json::{Value, json};
use support::{Fake, body, entries_of, finish_reason, parts, prompt};

const READ_FILE: &str = "mcp_dsh_read_file_c9f8123bd272";

fn read_script() -> Value {
    json!({"turns": [{"prompt_contains": "read", "steps": [
        {"text": "Reading"},
        {"call": {"tool": "read_file", "args": {"path": "a.txt"}}},
        {"expect_result": {"is_error": false, "contains": "hello"}},
        {"text": "Done"}
    ]}]})
}

/// The conversation after the call, with the result in a content of `role`.
fn follow_up(role: &str, result: Value) -> Value {
    body(
        json!([
            {"role": "user", "parts": [{"text": "please read"}]},
            {"role": "model", "parts": [{"text": "Reading"},
                {"functionCall": {"name": READ_FILE, "args": {"path": "a.txt"}}}]},
            {"role": role, "parts": [{"functionResponse": {"name": READ_FILE, "response": result}}]}
        ]),
        &[READ_FILE],
    )
}

#[tokio::test]
async fn a_call_segment_then_results_in_user_or_model_contents_play_the_next_segment() {
    let fake = Fake::start(read_script()).await;
    let events = fake
        .stream(&prompt("please read", &[READ_FILE]))
        .await
        .all()
        .await;
    assert_eq!(events.len(), 2);
    assert_eq!(parts(&events[0]), vec![json!({"text": "Reading"})]);
    let call = &parts(&events[1])[0];
    assert_eq!(
        call,
        &json!({"functionCall": {"name": READ_FILE, "args": {"path": "a.txt"}}})
    );
    assert_eq!(finish_reason(&events[1]), Some("STOP"));

    let good = json!({"output": "hello world"});
    for (seq, role) in [(2, "user"), (3, "model")] {
        let events = fake
            .stream(&follow_up(role, good.clone()))
            .await
            .all()
            .await;
        assert_eq!(parts(&events[0]), vec![json!({"text": "Done"})], "{role}");
        let journal = entries_of(&fake.api.journal(), seq);
        assert!(
            matches!(&journal[1], JournalEntry::Response { segment: 1, .. }),
            "{role}"
        );
        assert!(
            !journal
                .iter()
                .any(|entry| matches!(entry, JournalEntry::ExpectationFailed { .. })),
            "{role}: {journal:?}"
        );
    }
}

#[tokio::test]
async fn expect_result_mismatches_are_journaled_and_the_segment_still_plays() {
    let fake = Fake::start(read_script()).await;
    let cases = [
        (json!({"error": "no such file"}), "is_error is true"),
        (
            json!({"content": [{"text": "hello"}], "isError": true}),
            "is_error is true",
        ),
        (json!({"output": "goodbye"}), "does not contain \"hello\""),
    ];
    for (seq, (result, reason_part)) in (1..).zip(cases) {
        let events = fake.stream(&follow_up("user", result)).await.all().await;
        assert_eq!(parts(&events[0]), vec![json!({"text": "Done"})]);
        let journal = entries_of(&fake.api.journal(), seq);
        let failure = journal
            .iter()
            .find_map(|entry| match entry {
                JournalEntry::ExpectationFailed {
                    turn: 0,
                    step: 2,
                    reason,
                    ..
                } => Some(reason),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no expectation_failed for seq {seq}: {journal:?}"));
        assert!(failure.contains(reason_part), "{failure}");
    }
}

#[tokio::test]
async fn a_request_past_the_last_segment_is_unscripted_naming_turn_and_step() {
    let fake = Fake::start(read_script()).await;
    let mut past = follow_up("user", json!({"output": "hello"}));
    let contents = past["contents"].as_array_mut().unwrap();
    contents.push(json!({"role": "model", "parts": [{"functionCall": {"name": READ_FILE}}]}));
    contents.push(json!({"role": "user", "parts": [{"functionResponse": {"name": READ_FILE, "response": {}}}]}));
    let (status, answer) = fake.stream_error(&past).await;
    assert_eq!(status, 400);
    assert_eq!(answer["error"]["code"], 400);
    assert_eq!(answer["error"]["status"], "FAILED_PRECONDITION");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("fake-gemini-api: "), "{message}");
    assert!(
        message.contains("turn 0") && message.contains("step 4"),
        "{message}"
    );
    assert!(
        message.contains("segment 2") && message.contains("please read"),
        "{message}"
    );
    let journal = fake.api.journal();
    assert!(journal.iter().any(|entry| matches!(entry,
        JournalEntry::Unscripted { seq: 1, reason } if reason == message)));
}

#[tokio::test]
async fn parallel_calls_share_one_candidate() {
    let script = json!({"turns": [{"steps": [{"parallel": [
        {"tool": "read_file", "args": {"path": "a"}},
        {"tool": "list_dir"}
    ]}]}]});
    let fake = Fake::start(script).await;
    let declared = ["read_file_c9f8123bd272", "list_dir_0123456789ab"];
    let events = fake.stream(&prompt("go", &declared)).await.all().await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        parts(&events[0]),
        vec![
            json!({"functionCall": {"name": declared[0], "args": {"path": "a"}}}),
            json!({"functionCall": {"name": declared[1], "args": {}}}),
        ]
    );
    assert!(fake.api.journal().iter().any(|entry| matches!(entry,
        JournalEntry::Response { function_calls, .. } if function_calls == &declared)));
}

#[tokio::test]
async fn tool_names_resolve_by_hash_suffix_never_bare_and_never_loosely() {
    let script = json!({"turns": [{"steps": [{"call": {"tool": "read_file"}}]}]});
    let fake = Fake::start(script).await;
    let resolving: [(&[&str], &str); 4] = [
        (
            &["read_file", "read_file_c9f8123bd272"],
            "read_file_c9f8123bd272",
        ),
        (
            &["other", "read_file_c9f8123bd272"],
            "read_file_c9f8123bd272",
        ),
        (
            &["mcp_dsh_read_file_c9f8123bd272"],
            "mcp_dsh_read_file_c9f8123bd272",
        ),
        (
            &[
                "mcp_dsh_xread_file_c9f8123bd272",
                "a_read_file_0123456789ab",
            ],
            "a_read_file_0123456789ab",
        ),
    ];
    for (declared, expected) in resolving {
        let events = fake.stream(&prompt("go", declared)).await.all().await;
        assert_eq!(
            parts(&events[0])[0]["functionCall"]["name"],
            expected,
            "{declared:?}"
        );
    }
    let refused: [(&[&str], &str); 4] = [
        (&["read_file"], "no declared"),
        (
            &["read_file_c9f8123bd272", "mcp_dsh_read_file_0123456789ab"],
            "several",
        ),
        (
            &["read_file_extra", "my_read_file", "read_files_c9f8123bd272"],
            "no declared",
        ),
        (
            &[
                "xread_file_c9f8123bd272",
                "read_file_C9F8123BD272",
                "read_file_c9f8",
            ],
            "no declared",
        ),
    ];
    for (declared, why) in refused {
        let (status, answer) = fake.stream_error(&prompt("go", declared)).await;
        assert_eq!(status, 400, "{declared:?}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(why) && message.contains("turn 0 step 0"),
            "{message}"
        );
    }
    let unscripted = fake
        .api
        .journal()
        .iter()
        .filter(|entry| matches!(entry, JournalEntry::Unscripted { .. }))
        .count();
    assert_eq!(unscripted, 4);
}

#[tokio::test]
async fn a_native_the_agent_did_not_declare_is_withheld() {
    let script = json!({"turns": [{"steps": [
        {"native": {"name": "run_shell_command", "args": {"command": "ls"}}},
        {"expect_result": {"is_error": false}},
        {"text": "ok"}
    ]}]});
    let fake = Fake::start(script).await;
    let events = fake.stream(&prompt("go", &["read_file"])).await.all().await;
    assert_eq!(events.len(), 1);
    assert_eq!(parts(&events[0]), vec![json!({"text": "ok"})]);
    let journal = fake.api.journal();
    assert!(journal.iter().any(|entry| matches!(entry,
        JournalEntry::NativeWithheld { seq: 1, name } if name == "run_shell_command")));
    assert!(
        !journal
            .iter()
            .any(|entry| matches!(entry, JournalEntry::ExpectationFailed { .. }))
    );

    let events = fake
        .stream(&prompt("go", &["run_shell_command"]))
        .await
        .all()
        .await;
    assert_eq!(
        parts(&events[0]),
        vec![json!({"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}})]
    );
}
