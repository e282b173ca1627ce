//! The protocol-version rule over real loopback HTTP, the way a client that keeps its
//! announced version talks (once inferred for the 1.3.0 harness, which in fact sends the
//! negotiated version or none: docs/antigravity-1.3.0.md §20): `initialize` announcing
//! `2026-07-28`, then every request carrying that version in its `MCP-Protocol-Version`
//! header; plus the other things a real client may do (the
//! `notifications/initialized` notification, a GET for a server stream).

use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::McpServer;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::TestResult;
use crate::bridge::{Bridge, ParkedCall, ToolCatalog, ToolReply};
use crate::contract::ToolSchema;

type Failure = Box<dyn std::error::Error + Send + Sync>;

const BOUND: Duration = Duration::from_secs(10);

struct Endpoint {
    _bridge: Bridge,
    calls: mpsc::Receiver<ParkedCall>,
    url: String,
    authorization: String,
    client: reqwest::Client,
}

async fn endpoint() -> Result<Endpoint, Failure> {
    let catalog = ToolCatalog::build(&[ToolSchema {
        name: "echo".into(),
        description: "Echoes".into(),
        parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
    }])?;
    let (calls_tx, calls) = mpsc::channel(4);
    let bridge = Bridge::start(Arc::new(catalog), calls_tx, &CancellationToken::new()).await?;
    let McpServer::Http(http) = bridge.descriptor() else {
        return Err("not an http descriptor".into());
    };
    Ok(Endpoint {
        _bridge: bridge,
        calls,
        url: http.url,
        authorization: http.headers[0].value.clone(),
        client: reqwest::Client::new(),
    })
}

impl Endpoint {
    /// POSTs `body` with the token and, if given, `MCP-Protocol-Version: version`.
    async fn post(&self, version: Option<&str>, body: &Value) -> Result<(u16, String), Failure> {
        let mut request = self
            .client
            .post(&self.url)
            .header("authorization", &self.authorization)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(version) = version {
            request = request.header("mcp-protocol-version", version);
        }
        let response = request.body(body.to_string()).send().await?;
        let status = response.status().as_u16();
        Ok((status, response.text().await?))
    }
}

fn initialize(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "localharness_external", "version": "1.3.0"}}})
}

fn tools_list() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
}

#[tokio::test]
async fn the_harness_version_is_negotiated_down_then_accepted_in_every_header() -> TestResult {
    let bridge = endpoint().await?;
    let (status, body) = bridge.post(None, &initialize("2026-07-28")).await?;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body)?;
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-11-25",
        "{answer}"
    );

    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _) = bridge.post(Some("2026-07-28"), &initialized).await?;
    assert_eq!(status, 202, "a notification is accepted with no body");

    let (status, body) = bridge.post(Some("2026-07-28"), &tools_list()).await?;
    assert_eq!(status, 200, "{body}");
    let listed: Value = serde_json::from_str(&body)?;
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(1));
    Ok(())
}

#[tokio::test]
async fn a_call_under_the_harness_version_parks_and_is_answered() -> TestResult {
    let mut bridge = endpoint().await?;
    let (_, body) = bridge.post(Some("2026-07-28"), &tools_list()).await?;
    let listed: Value = serde_json::from_str(&body)?;
    let name = listed["result"]["tools"][0]["name"]
        .as_str()
        .ok_or("no tool name")?
        .to_owned();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": name, "arguments": {"text": "hi"}}});
    let posting = {
        let client = bridge.client.clone();
        let request = client
            .post(&bridge.url)
            .header("authorization", &bridge.authorization)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .body(call.to_string());
        tokio::spawn(async move { request.send().await?.text().await })
    };
    let parked = tokio::time::timeout(BOUND, bridge.calls.recv())
        .await?
        .ok_or("no parked call")?;
    assert_eq!(parked.arguments, json!({"text": "hi"}));
    assert!(parked.resolve(ToolReply {
        text: "ok".into(),
        is_error: false,
    }));
    let answer: Value = serde_json::from_str(&tokio::time::timeout(BOUND, posting).await???)?;
    assert_eq!(answer["result"]["content"][0]["text"], "ok", "{answer}");
    Ok(())
}

#[tokio::test]
async fn an_initialize_that_also_carries_the_harness_version_in_its_header_is_answered()
-> TestResult {
    let bridge = endpoint().await?;
    let (status, body) = bridge
        .post(Some("2026-07-28"), &initialize("2026-07-28"))
        .await?;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body)?;
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-11-25",
        "{answer}"
    );
    Ok(())
}

#[tokio::test]
async fn a_body_over_the_limit_under_the_harness_version_is_413() -> TestResult {
    let bridge = endpoint().await?;
    let padding = "x".repeat(crate::bridge::MAX_BODY_BYTES);
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_pad": padding}});
    let (status, _) = bridge.post(Some("2026-07-28"), &body).await?;
    assert_eq!(status, 413);
    Ok(())
}

#[tokio::test]
async fn known_older_versions_pass_and_malformed_ones_are_400() -> TestResult {
    let bridge = endpoint().await?;
    for version in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let (status, body) = bridge.post(Some(version), &tools_list()).await?;
        assert_eq!(status, 200, "{version}: {body}");
    }
    for version in ["2026-7-28", "latest", "2026-07-28T00:00", "2026-13-01", ""] {
        let (status, _) = bridge.post(Some(version), &tools_list()).await?;
        assert_eq!(status, 400, "`{version}` must be refused");
    }
    Ok(())
}

#[tokio::test]
async fn a_get_for_a_server_stream_is_405_with_allow_post() -> TestResult {
    let bridge = endpoint().await?;
    let response = bridge
        .client
        .get(&bridge.url)
        .header("authorization", &bridge.authorization)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .send()
        .await?;
    assert_eq!(response.status(), 405);
    assert_eq!(
        response.headers().get("allow").map(|v| v.as_bytes()),
        Some(&b"POST"[..])
    );
    Ok(())
}
