//! Test helpers: start the fake with a JSON script, post requests over real loopback HTTP,
//! read SSE events one by one (each read bounded), build request bodies.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::time::Duration;

use fake_gemini_api::{JournalEntry, ModelApi, ModelScript};
use serde_json::{Value, json};
use tempfile::TempDir;

/// The bound on any single wait in the tests.
pub const BOUND: Duration = Duration::from_secs(10);

/// A running fake and the folder holding its journal.
pub struct Fake {
    pub api: ModelApi,
    pub dir: TempDir,
    pub client: reqwest::Client,
}

impl Fake {
    pub async fn start(script: Value) -> Fake {
        let script = ModelScript::from_json(&script.to_string()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let api = ModelApi::start(script, dir.path().join("journal.jsonl"))
            .await
            .unwrap();
        Fake {
            api,
            dir,
            client: reqwest::Client::new(),
        }
    }

    pub fn journal_path(&self) -> std::path::PathBuf {
        self.dir.path().join("journal.jsonl")
    }

    /// POSTs `body` to `path` (which may carry a query), with extra headers.
    pub async fn post_with(
        &self,
        path: &str,
        body: &str,
        headers: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut request = self
            .client
            .post(format!("{}{path}", self.api.url()))
            .header("content-type", "application/json")
            .body(body.to_owned());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        tokio::time::timeout(BOUND, request.send())
            .await
            .expect("the response headers within the bound")
            .unwrap()
    }

    pub async fn post(&self, path: &str, body: &Value) -> reqwest::Response {
        self.post_with(path, &body.to_string(), &[]).await
    }

    /// `streamGenerateContent?alt=sse` on `gemini-test`.
    pub async fn stream(&self, body: &Value) -> Events {
        let response = self
            .post(
                "/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
                body,
            )
            .await;
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        Events {
            response,
            buffer: Vec::new(),
        }
    }

    /// `generateContent` on `gemini-test`: status and JSON body.
    pub async fn generate(&self, body: &Value) -> (u16, Value) {
        let response = self
            .post("/v1beta/models/gemini-test:generateContent", body)
            .await;
        json_of(response).await
    }

    /// A stream request expected to fail: status and JSON body.
    pub async fn stream_error(&self, body: &Value) -> (u16, Value) {
        let response = self
            .post(
                "/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
                body,
            )
            .await;
        json_of(response).await
    }

    pub async fn wait_for(&self, predicate: impl Fn(&JournalEntry) -> bool) -> JournalEntry {
        self.api.wait_for_journal(predicate, BOUND).await.unwrap()
    }
}

pub async fn json_of(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let bytes = tokio::time::timeout(BOUND, response.bytes())
        .await
        .expect("the body within the bound")
        .unwrap();
    (status, serde_json::from_slice(&bytes).unwrap())
}

/// An SSE body read event by event.
pub struct Events {
    pub response: reqwest::Response,
    buffer: Vec<u8>,
}

impl Events {
    /// The next event's JSON, or `None` when the body ends.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self
                .buffer
                .windows(4)
                .position(|window| window == b"\r\n\r\n")
            {
                let frame: Vec<u8> = self.buffer.drain(..end + 4).collect();
                let text = String::from_utf8(frame).unwrap();
                let data = text
                    .strip_prefix("data: ")
                    .and_then(|rest| rest.strip_suffix("\r\n\r\n"))
                    .unwrap_or_else(|| panic!("not one `data:` event: {text:?}"));
                return Some(serde_json::from_str(data).unwrap());
            }
            let chunk = tokio::time::timeout(BOUND, self.response.chunk())
                .await
                .expect("the next chunk within the bound")
                .unwrap();
            match chunk {
                Some(bytes) => self.buffer.extend_from_slice(&bytes),
                None => {
                    assert!(self.buffer.is_empty(), "a partial event at the end");
                    return None;
                }
            }
        }
    }

    /// Every remaining event.
    pub async fn all(mut self) -> Vec<Value> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await {
            events.push(event);
        }
        events
    }
}

/// The parts of a response's only candidate.
pub fn parts(response: &Value) -> Vec<Value> {
    let candidates = response["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 1);
    candidates[0]["content"]["parts"]
        .as_array()
        .unwrap()
        .clone()
}

pub fn finish_reason(response: &Value) -> Option<&str> {
    response["candidates"][0]["finishReason"].as_str()
}

/// A request body: the given contents and function declarations.
pub fn body(contents: Value, declared: &[&str]) -> Value {
    let declarations: Vec<Value> = declared
        .iter()
        .map(|name| {
            json!({"name": name, "description": format!("the {name} tool"),
                           "parametersJsonSchema": {"type": "object"}})
        })
        .collect();
    json!({
        "contents": contents,
        "systemInstruction": {"parts": [{"text": "You are a test."}]},
        "tools": [{"functionDeclarations": declarations}],
        "generationConfig": {"temperature": 0}
    })
}

/// A first request: one user prompt.
pub fn prompt(text: &str, declared: &[&str]) -> Value {
    body(
        json!([{"role": "user", "parts": [{"text": text}]}]),
        declared,
    )
}

/// The journal entries of one request.
pub fn entries_of(journal: &[JournalEntry], wanted: u64) -> Vec<JournalEntry> {
    journal
        .iter()
        .filter(|entry| seq_of(entry) == wanted)
        .cloned()
        .collect()
}

pub fn seq_of(entry: &JournalEntry) -> u64 {
    match entry {
        JournalEntry::Request(request) => request.seq,
        JournalEntry::Response { seq, .. }
        | JournalEntry::Utility { seq, .. }
        | JournalEntry::NativeWithheld { seq, .. }
        | JournalEntry::ExpectationFailed { seq, .. }
        | JournalEntry::Unscripted { seq, .. }
        | JournalEntry::Cancelled { seq, .. }
        | JournalEntry::NotFound { seq, .. } => *seq,
    }
}
