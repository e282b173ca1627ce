//! The bridge over real loopback HTTP: refusals with their statuses, the body limit, and
//! an MCP round trip whose call is parked until the turn answers it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use agent_client_protocol::v1::schema::McpServer;
use serde_json::{Value, json};

use super::*;
use crate::contract::ToolDefinition;

const BOUND: Duration = Duration::from_secs(10);

struct Running {
    bridge: Bridge,
    calls: mpsc::Receiver<ParkedCall>,
    url: String,
    authorization: String,
    client: reqwest::Client,
}

async fn running() -> Running {
    running_with_queue(8).await
}

/// A bridge whose parked calls queue up to `queue` deep before the handler waits.
async fn running_with_queue(queue: usize) -> Running {
    let catalog = ToolCatalog::build(&[ToolDefinition {
        name: "read.file".into(),
        description: "Reads a file".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string", "minLength": 2}}, "required": ["path"], "additionalProperties": false}),
    }])
    .unwrap();
    let (calls_tx, calls) = mpsc::channel(queue);
    let bridge = Bridge::start(Arc::new(catalog), calls_tx, &CancellationToken::new())
        .await
        .unwrap();
    let McpServer::Http(http) = bridge.descriptor() else {
        panic!("not an http descriptor")
    };
    assert_eq!(http.name, BRIDGE_SERVER_NAME);
    assert!(http.url.starts_with("http://127.0.0.1:"), "{}", http.url);
    let authorization = http.headers[0].value.clone();
    assert_eq!(http.headers[0].name, "Authorization");
    Running {
        bridge,
        calls,
        url: http.url,
        authorization,
        client: reqwest::Client::new(),
    }
}

impl Running {
    fn post(&self) -> reqwest::RequestBuilder {
        self.client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
    }

    async fn rpc(&self, body: Value) -> Value {
        let response = self
            .post()
            .header("authorization", &self.authorization)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        serde_json::from_str(&response.text().await.unwrap()).unwrap()
    }
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

#[tokio::test]
async fn refusals_carry_the_right_status() {
    let bridge = running().await;
    let token = bridge.authorization.clone();
    let ok_body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let get = bridge
        .client
        .get(&bridge.url)
        .header("authorization", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 405);
    let no_token = bridge.post().body(ok_body.clone()).send().await.unwrap();
    assert_eq!(no_token.status(), 401);
    let wrong = bridge
        .post()
        .header("authorization", "Bearer 00")
        .body(ok_body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let origin = bridge
        .post()
        .header("authorization", &token)
        .header("origin", "http://127.0.0.1")
        .body(ok_body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(origin.status(), 403);
    let host = bridge
        .post()
        .header("authorization", &token)
        .header("host", "attacker.example")
        .body(ok_body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(host.status(), 421);
    let huge = format!("{{\"pad\":\"{}\"}}", "x".repeat(MAX_BODY_BYTES));
    let too_big = bridge
        .post()
        .header("authorization", &token)
        .body(huge)
        .send()
        .await
        .unwrap();
    assert_eq!(too_big.status(), 413);
    let other_path = bridge.url.replace("/mcp", "/other");
    let elsewhere = bridge
        .client
        .post(other_path)
        .header("authorization", &token)
        .body(ok_body)
        .send()
        .await
        .unwrap();
    assert_eq!(elsewhere.status(), 404);
    bridge.bridge.close().await;
}

#[tokio::test]
async fn tools_list_shows_hashed_names_with_original_titles() {
    let bridge = running().await;
    let listed = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let tool = &listed["result"]["tools"][0];
    assert_eq!(tool["title"], "read.file");
    assert!(tool["name"].as_str().unwrap().starts_with("read_file_"));
    assert_eq!(tool["inputSchema"]["properties"]["path"]["minLength"], 2);
    bridge.bridge.close().await;
}

#[tokio::test]
async fn a_valid_call_parks_until_answered_and_an_invalid_one_never_reaches_dsh() {
    let mut bridge = running().await;
    let name = catalog::mcp_name("read.file");
    let invalid = bridge.rpc(call(1, &name, json!({"path": "x"}))).await;
    assert_eq!(invalid["result"]["isError"], true, "{invalid}");
    assert!(
        bridge.calls.try_recv().is_err(),
        "an invalid call reached DSH"
    );
    let unknown = bridge.rpc(call(2, "nope", json!({}))).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    let pending = tokio::spawn({
        let request = bridge
            .post()
            .header("authorization", &bridge.authorization)
            .body(call(3, &name, json!({"path": "notes.md"})).to_string());
        async move { request.send().await.unwrap().text().await.unwrap() }
    });
    let parked = tokio::time::timeout(BOUND, bridge.calls.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(parked.tool_name, "read.file");
    assert_eq!(parked.arguments, json!({"path": "notes.md"}));
    assert!(parked.call_id.starts_with("call_"));
    assert!(
        !pending.is_finished(),
        "the HTTP request must stay pending while parked"
    );
    assert!(parked.resolve(ToolReply {
        text: "denied by DSH".into(),
        is_error: true
    }));
    let answer: Value =
        serde_json::from_str(&tokio::time::timeout(BOUND, pending).await.unwrap().unwrap())
            .unwrap();
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(answer["result"]["content"][0]["text"], "denied by DSH");
    bridge.bridge.close().await;
}

#[tokio::test]
async fn closing_settles_parked_calls_and_releases_the_port() {
    let mut bridge = running().await;
    let name = catalog::mcp_name("read.file");
    let pending = tokio::spawn({
        let request = bridge
            .post()
            .header("authorization", &bridge.authorization)
            .body(call(1, &name, json!({"path": "notes.md"})).to_string());
        async move { request.send().await.unwrap().text().await.unwrap() }
    });
    let parked = tokio::time::timeout(BOUND, bridge.calls.recv())
        .await
        .unwrap()
        .unwrap();
    let url = bridge.url.clone();
    bridge.bridge.close().await;
    let answer: Value =
        serde_json::from_str(&tokio::time::timeout(BOUND, pending).await.unwrap().unwrap())
            .unwrap();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    drop(parked);
    let after = reqwest::Client::new().post(url).send().await;
    assert!(
        after.is_err_and(|e| e.is_connect()),
        "the port still answers after close"
    );
}

#[tokio::test]
async fn a_turn_parks_at_most_64_calls_at_once() {
    let mut bridge = running_with_queue(MAX_PENDING_CALLS).await;
    let name = catalog::mcp_name("read.file");
    let mut requests = Vec::new();
    for id in 0..MAX_PENDING_CALLS as u64 {
        let request = bridge
            .post()
            .header("authorization", &bridge.authorization)
            .body(call(id, &name, json!({"path": "notes.md"})).to_string());
        requests.push(tokio::spawn(async move {
            request.send().await.unwrap().text().await.unwrap()
        }));
    }
    let mut parked = Vec::new();
    for _ in 0..MAX_PENDING_CALLS {
        parked.push(
            tokio::time::timeout(BOUND, bridge.calls.recv())
                .await
                .unwrap()
                .unwrap(),
        );
    }
    let refused = bridge
        .rpc(call(999, &name, json!({"path": "notes.md"})))
        .await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("at most 64"), "{text}");
    assert!(
        bridge.calls.try_recv().is_err(),
        "the 65th call reached DSH"
    );
    // Answering one frees its slot.
    assert!(parked.pop().unwrap().resolve(ToolReply {
        text: "done".into(),
        is_error: false
    }));
    let freed = tokio::spawn({
        let request = bridge
            .post()
            .header("authorization", &bridge.authorization)
            .body(call(1000, &name, json!({"path": "notes.md"})).to_string());
        async move { request.send().await.unwrap().text().await.unwrap() }
    });
    let admitted = tokio::time::timeout(BOUND, bridge.calls.recv())
        .await
        .unwrap()
        .unwrap();
    admitted.resolve(ToolReply {
        text: "late".into(),
        is_error: false,
    });
    let answer: Value =
        serde_json::from_str(&tokio::time::timeout(BOUND, freed).await.unwrap().unwrap()).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "late");
    drop(parked);
    bridge.bridge.close().await;
    for request in requests {
        tokio::time::timeout(BOUND, request).await.unwrap().unwrap();
    }
}
