//! Text, thought, stream and usage steps over SSE event by event; the same segment as one
//! `generateContent` JSON; finish reasons; the echo profile; countTokens; 404s.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use fake_gemini_api::JournalEntry;
use serde_json::{Value, json};
use support::{Fake, finish_reason, parts, prompt};

fn script() -> Value {
    json!({"turns": [
        {"prompt_contains": "long", "steps": [{"text": "cut"}], "finish": "max_tokens"},
        {"steps": [
            {"thought": "thinking"},
            {"text": "Hello"},
            {"stream": {"text": "abcde", "code_points": 2}},
            {"usage": {"prompt_tokens": 7, "candidates_tokens": 3}}
        ]}
    ]})
}

#[tokio::test]
async fn text_thought_stream_and_usage_arrive_event_by_event() {
    let fake = Fake::start(script()).await;
    let mut events = fake.stream(&prompt("say hello", &[])).await;
    let mut received = Vec::new();
    while let Some(event) = events.next().await {
        assert_eq!(event["modelVersion"], "gemini-test");
        assert_eq!(event["candidates"][0]["content"]["role"], "model");
        received.push(event);
    }
    let all_parts: Vec<Vec<Value>> = received.iter().map(parts).collect();
    assert_eq!(
        all_parts,
        vec![
            vec![json!({"text": "thinking", "thought": true})],
            vec![json!({"text": "Hello"})],
            vec![json!({"text": "ab"})],
            vec![json!({"text": "cd"})],
            vec![json!({"text": "e"})],
        ]
    );
    for middle in &received[..4] {
        assert_eq!(finish_reason(middle), None);
        assert!(middle.get("usageMetadata").is_none());
    }
    let last = &received[4];
    assert_eq!(finish_reason(last), Some("STOP"));
    assert_eq!(
        last["usageMetadata"],
        json!({"promptTokenCount": 7, "candidatesTokenCount": 3, "totalTokenCount": 10})
    );
    let journal = fake.api.journal();
    assert!(matches!(&journal[0], JournalEntry::Request(request) if request.seq == 1));
    assert!(matches!(
        &journal[1],
        JournalEntry::Response { seq: 1, turn: Some(1), segment: 0, steps, .. } if steps.len() == 4
    ));
}

#[tokio::test]
async fn generate_content_sends_the_segment_in_one_candidate() {
    let fake = Fake::start(script()).await;
    let (status, response) = fake.generate(&prompt("say hello", &[])).await;
    assert_eq!(status, 200);
    assert_eq!(
        parts(&response),
        vec![
            json!({"text": "thinking", "thought": true}),
            json!({"text": "Hello"}),
            json!({"text": "abcde"}),
        ]
    );
    assert_eq!(finish_reason(&response), Some("STOP"));
    assert_eq!(response["usageMetadata"]["totalTokenCount"], 10);
}

#[tokio::test]
async fn the_turn_finish_reason_ends_its_last_response() {
    let fake = Fake::start(script()).await;
    let events = fake.stream(&prompt("a long answer", &[])).await.all().await;
    assert_eq!(events.len(), 1);
    assert_eq!(parts(&events[0]), vec![json!({"text": "cut"})]);
    assert_eq!(finish_reason(&events[0]), Some("MAX_TOKENS"));
    assert!(
        events[0]["usageMetadata"]["totalTokenCount"]
            .as_u64()
            .unwrap()
            >= 2
    );
}

#[tokio::test]
async fn no_turns_echoes_the_prompt_on_every_api_version() {
    let fake = Fake::start(json!({})).await;
    let events = fake.stream(&prompt("hi there", &[])).await.all().await;
    assert_eq!(events.len(), 1);
    assert_eq!(parts(&events[0]), vec![json!({"text": "hi there"})]);
    assert_eq!(finish_reason(&events[0]), Some("STOP"));
    for version in ["v1", "v1alpha"] {
        let response = fake
            .post(
                &format!("/{version}/models/gemini-x:generateContent"),
                &prompt("again", &[]),
            )
            .await;
        let (status, answer) = support::json_of(response).await;
        assert_eq!(status, 200, "{version}");
        assert_eq!(parts(&answer), vec![json!({"text": "again"})]);
        assert_eq!(answer["modelVersion"], "gemini-x");
    }
}

#[tokio::test]
async fn count_tokens_is_a_quarter_of_the_characters_at_least_one() {
    let fake = Fake::start(script()).await;
    let path = "/v1beta/models/gemini-test:countTokens";
    let forty = "x".repeat(40);
    let (status, answer) = support::json_of(fake.post(path, &prompt(&forty, &[])).await).await;
    assert_eq!((status, answer), (200, json!({"totalTokens": 10})));
    let (_, empty) = support::json_of(fake.post(path, &json!({"contents": []})).await).await;
    assert_eq!(empty, json!({"totalTokens": 1}));
    let wrapped = json!({"generateContentRequest": prompt(&"y".repeat(21), &[])});
    let (_, answer) = support::json_of(fake.post(path, &wrapped).await).await;
    assert_eq!(answer, json!({"totalTokens": 5}));
    let journal = fake.api.journal();
    assert!(
        !journal
            .iter()
            .any(|entry| matches!(entry, JournalEntry::Response { .. }))
    );
}

#[tokio::test]
async fn other_paths_are_404_with_a_gemini_error() {
    let fake = Fake::start(script()).await;
    let response = fake
        .post("/v1beta/models/gemini-test:embedContent", &json!({}))
        .await;
    let (status, answer) = support::json_of(response).await;
    assert_eq!(status, 404);
    assert_eq!(answer["error"]["code"], 404);
    assert_eq!(answer["error"]["status"], "NOT_FOUND");
    let listing = fake
        .client
        .get(format!("{}/v1beta/models", fake.api.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(listing.status(), 404);
    let journal = fake.api.journal();
    assert!(
        matches!(&journal[1], JournalEntry::NotFound { method, path, .. }
        if method == "GET" && path == "/v1beta/models")
    );
}
