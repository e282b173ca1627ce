//! Unscripted and malformed requests, `wait_for_cancel` (cancelled and timed out), API
//! keys journaled by shape only, and utility (JSON) side requests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use fake_gemini_api::{JournalEntry, read_journal};
use serde_json::json;
use support::{Fake, finish_reason, parts, prompt};

#[tokio::test]
async fn a_prompt_no_turn_matches_is_a_400_and_journaled() {
    let fake = Fake::start(json!({"turns": [{"prompt_contains": "alpha", "steps": []}]})).await;
    let (status, answer) = fake.stream_error(&prompt("beta", &["t"])).await;
    assert_eq!(status, 400);
    assert_eq!(answer["error"]["status"], "FAILED_PRECONDITION");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("fake-gemini-api: "), "{message}");
    assert!(
        message.contains("turn none") && message.contains("\"beta\""),
        "{message}"
    );
    let entries = read_journal(&fake.journal_path()).unwrap();
    assert!(matches!(&entries[0], JournalEntry::Request(_)));
    assert!(
        matches!(&entries[1], JournalEntry::Unscripted { seq: 1, reason } if reason == message)
    );
}

#[tokio::test]
async fn a_malformed_body_is_a_400_invalid_argument() {
    let fake = Fake::start(json!({})).await;
    let response = fake
        .post_with("/v1beta/models/m:generateContent", "{\"contents\": [", &[])
        .await;
    let (status, answer) = support::json_of(response).await;
    assert_eq!(status, 400);
    assert_eq!(answer["error"]["status"], "INVALID_ARGUMENT");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("EOF while parsing"), "{message}");
}

fn waiting_script(timeout_ms: u64) -> serde_json::Value {
    json!({"turns": [{"steps": [
        {"text": "working"},
        {"wait_for_cancel": {"timeout_ms": timeout_ms}}
    ]}]})
}

#[tokio::test]
async fn wait_for_cancel_journals_cancelled_when_the_client_drops() {
    let fake = Fake::start(waiting_script(60_000)).await;
    let mut events = fake.stream(&prompt("go", &[])).await;
    let first = events.next().await.unwrap();
    assert_eq!(parts(&first), vec![json!({"text": "working"})]);
    assert_eq!(finish_reason(&first), None);
    drop(events);
    let cancelled = fake
        .wait_for(|entry| matches!(entry, JournalEntry::Cancelled { .. }))
        .await;
    assert_eq!(cancelled, JournalEntry::Cancelled { seq: 1, turn: 0 });
    assert!(
        !fake
            .api
            .journal()
            .iter()
            .any(|entry| matches!(entry, JournalEntry::ExpectationFailed { .. }))
    );
}

#[tokio::test]
async fn wait_for_cancel_without_a_cancel_fails_the_expectation_and_finishes() {
    let fake = Fake::start(waiting_script(50)).await;
    let events = fake.stream(&prompt("go", &[])).await.all().await;
    assert_eq!(events.len(), 2);
    assert_eq!(parts(&events[0]), vec![json!({"text": "working"})]);
    assert_eq!(finish_reason(&events[1]), Some("STOP"));
    let journal = fake.api.journal();
    assert!(journal.iter().any(|entry| matches!(entry,
        JournalEntry::ExpectationFailed { seq: 1, turn: 0, step: 1, reason }
            if reason == "no cancel within 50 ms")));
    assert!(
        !journal
            .iter()
            .any(|entry| matches!(entry, JournalEntry::Cancelled { .. }))
    );
}

#[tokio::test]
async fn api_keys_are_journaled_by_shape_only() {
    let fake = Fake::start(json!({})).await;
    let body = prompt("hi", &[]).to_string();
    let stream = "/v1beta/models/m:streamGenerateContent?alt=sse";
    let header_key = "HeaderSecret123";
    let query_key = "QuerySecret45678";
    let bearer = "BearerSecret9";
    let answers = [
        fake.post_with(stream, &body, &[("x-goog-api-key", header_key)])
            .await,
        fake.post_with(&format!("{stream}&key={query_key}"), &body, &[])
            .await,
        fake.post_with(
            stream,
            &body,
            &[("authorization", &format!("Bearer {bearer}"))],
        )
        .await,
    ];
    for answer in answers {
        assert_eq!(answer.status(), 200);
        answer.bytes().await.unwrap();
    }
    let shapes: Vec<serde_json::Value> = fake
        .api
        .journal()
        .iter()
        .filter_map(|entry| match entry {
            JournalEntry::Request(request) => Some(serde_json::to_value(&request.api_key).unwrap()),
            _ => None,
        })
        .collect();
    assert_eq!(
        shapes,
        vec![
            json!({"header": "x-goog-api-key", "chars": header_key.len()}),
            json!({"query": "key", "chars": query_key.len()}),
            json!({"header": "authorization", "chars": bearer.len()}),
        ]
    );
    let file = std::fs::read_to_string(fake.journal_path()).unwrap();
    for secret in [header_key, query_key, bearer] {
        assert!(!file.contains(secret), "{secret} leaked into the journal");
    }
    assert!(file.contains("\"path\":\"/v1beta/models/m:streamGenerateContent\""));
}

#[tokio::test]
async fn a_json_side_request_gets_a_minimal_schema_instance_and_is_no_turn() {
    let script = json!({"turns": [{"steps": [{"text": "the turn"}]}]});
    let fake = Fake::start(script).await;
    let mut side = prompt("who speaks next?", &[]);
    side["generationConfig"] = json!({
        "responseMimeType": "application/json",
        "responseSchema": {
            "type": "OBJECT",
            "properties": {
                "reasoning": {"type": "STRING"},
                "next_speaker": {"type": "STRING", "enum": ["user", "model"]},
                "confidence": {"type": "NUMBER"}
            },
            "required": ["reasoning", "next_speaker"]
        }
    });
    let (status, answer) = fake.generate(&side).await;
    assert_eq!(status, 200);
    let text = parts(&answer)[0]["text"].as_str().unwrap().to_owned();
    let instance: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(instance, json!({"reasoning": "", "next_speaker": "user"}));
    assert_eq!(finish_reason(&answer), Some("STOP"));

    let mut router = prompt("route", &[]);
    router["generationConfig"] = json!({"responseJsonSchema": {"type": "object",
        "properties": {"model_choice": {"type": "string", "enum": ["flash", "pro"]},
                       "ok": {"type": "boolean"}}}});
    let (_, answer) = fake.generate(&router).await;
    let text = parts(&answer)[0]["text"].as_str().unwrap().to_owned();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text).unwrap(),
        json!({"model_choice": "flash", "ok": false})
    );

    let events = fake
        .stream(&prompt("the real prompt", &[]))
        .await
        .all()
        .await;
    assert_eq!(parts(&events[0]), vec![json!({"text": "the turn"})]);
    let journal = fake.api.journal();
    let utilities = journal
        .iter()
        .filter(|entry| matches!(entry, JournalEntry::Utility { .. }))
        .count();
    assert_eq!(utilities, 2);
    let responses: Vec<u64> = journal
        .iter()
        .filter_map(|entry| match entry {
            JournalEntry::Response { seq, .. } => Some(*seq),
            _ => None,
        })
        .collect();
    assert_eq!(responses, vec![3]);
}
