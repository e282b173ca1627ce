//! C56 through the public API: the design's literal catalog bounds (256 tools per request,
//! 131 072 bytes per definition) seen from outside, through [`StandaloneBridge`] (the very
//! catalog and bridge a turn starts) and its `tools/list` over loopback HTTP. The numbers
//! are written out, never taken from the adapter's constants, so a changed constant fails.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests make fixtures on disk and start stand-in servers (adapter/clippy.toml)"
)]

use std::time::Duration;

use antigravity_acp::contract::{LlmErrorCode, ToolSchema};
use antigravity_acp::{BridgeAnswer, StandaloneBridge};
use serde_json::{Value, json};

const BOUND: Duration = Duration::from_secs(10);

fn answer(_name: &str, _arguments: &Value) -> BridgeAnswer {
    BridgeAnswer {
        text: "ok".into(),
        is_error: false,
    }
}

fn small_tool(i: usize) -> ToolSchema {
    ToolSchema {
        name: format!("tool.{i}"),
        description: "a tool".into(),
        parameters: json!({"type": "object"}),
    }
}

/// A definition exactly `size` bytes long (name + description + schema as JSON), its
/// bytes spread over all three parts.
fn definition_of(size: usize) -> anyhow::Result<ToolSchema> {
    let name = "n".repeat(1_000);
    let description = "d".repeat(30_000);
    let empty = serde_json::to_vec(&json!({"type": "object", "description": ""}))?.len();
    let padding = size - name.len() - description.len() - empty;
    let definition = ToolSchema {
        name,
        description,
        parameters: json!({"type": "object", "description": "s".repeat(padding)}),
    };
    let total = definition.name.len()
        + definition.description.len()
        + serde_json::to_vec(&definition.parameters)?.len();
    assert_eq!(total, size);
    Ok(definition)
}

/// The tools the bridge lists over HTTP.
async fn listed(bridge: &StandaloneBridge) -> anyhow::Result<usize> {
    let response = tokio::time::timeout(
        BOUND,
        reqwest::Client::new()
            .post(bridge.url())
            .header("authorization", format!("Bearer {}", bridge.token()))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
            .send(),
    )
    .await??;
    assert_eq!(response.status(), 200);
    let body: Value = serde_json::from_str(&response.text().await?)?;
    Ok(body["result"]["tools"]
        .as_array()
        .map_or(0, |tools| tools.len()))
}

#[tokio::test]
async fn a_request_may_offer_256_tools_and_not_257() -> anyhow::Result<()> {
    let tools: Vec<_> = (0..257).map(small_tool).collect();
    let bridge = StandaloneBridge::start(&tools[..256], answer).await?;
    assert_eq!(listed(&bridge).await?, 256);
    bridge.close().await;
    let refused = StandaloneBridge::start(&tools, answer).await.err();
    assert_eq!(
        refused.map(|e| e.code),
        Some(LlmErrorCode::AcpToolCatalogInvalid),
        "257 tools were accepted"
    );
    Ok(())
}

#[tokio::test]
async fn a_definition_may_be_131_072_bytes_and_not_131_073() -> anyhow::Result<()> {
    let bridge = StandaloneBridge::start(&[definition_of(131_072)?], answer).await?;
    assert_eq!(listed(&bridge).await?, 1);
    bridge.close().await;
    let refused = StandaloneBridge::start(&[definition_of(131_073)?], answer)
        .await
        .err();
    assert_eq!(
        refused.map(|e| e.code),
        Some(LlmErrorCode::AcpToolCatalogInvalid),
        "a definition of 131 073 bytes was accepted"
    );
    Ok(())
}
