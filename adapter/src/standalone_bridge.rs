//! [`StandaloneBridge`]: a turn's MCP bridge on its own, for integrators and tools
//! (`dsh-sim bridge`). It is the very bridge a turn starts (the same tool catalog, name
//! hashing, schema validation, bearer token, HTTP guard, body limit and pending-call
//! bound), with each valid call answered by a callback instead of DSH's agent loop.

use std::sync::Arc;

use agent_client_protocol::v1::schema::McpServer;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};
use tokio_util::task::AbortOnDropHandle;

use crate::bridge::{Bridge, MAX_PENDING_CALLS, ToolCatalog, ToolReply};
use crate::contract::{LlmError, LlmErrorCode, ToolSchema};

/// One exported tool: DSH's name and the hashed name MCP clients call it by.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BridgeTool {
    /// DSH's name for the tool (the MCP `title`).
    pub name: String,
    /// The exported MCP tool name.
    pub mcp_name: String,
}

/// How the callback answers one valid call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeAnswer {
    /// The result's text content.
    pub text: String,
    /// MCP `isError`.
    pub is_error: bool,
}

/// A running bridge that answers its own calls. Dropping it stops serving at once;
/// [`StandaloneBridge::close`] first lets in-flight requests finish, as a turn does.
#[derive(Debug)]
pub struct StandaloneBridge {
    bridge: Bridge,
    url: String,
    token: String,
    tools: Vec<BridgeTool>,
    answering: AbortOnDropHandle<()>,
    _stop: DropGuard,
}

impl StandaloneBridge {
    /// Binds a fresh bridge on `127.0.0.1:0` exporting `tools`, and answers each valid
    /// `tools/call` with `answer(DSH tool name, validated arguments)`. Fails as a turn
    /// would (`invalid_tool_definition` for a tool that cannot be exported).
    pub async fn start<F>(tools: &[ToolSchema], answer: F) -> Result<Self, LlmError>
    where
        F: Fn(&str, &Value) -> BridgeAnswer + Send + 'static,
    {
        let catalog = Arc::new(ToolCatalog::build(tools).map_err(|e| e.to_llm_error())?);
        // The same queue depth as a turn's.
        let (calls_tx, mut calls) = mpsc::channel(MAX_PENDING_CALLS);
        let stop = CancellationToken::new();
        let bridge = Bridge::start(catalog.clone(), calls_tx, &stop)
            .await
            .map_err(|e| e.to_llm_error())?;
        let McpServer::Http(http) = bridge.descriptor() else {
            return Err(LlmError::new(
                LlmErrorCode::AcpInternal,
                "the bridge is not an HTTP MCP server",
            ));
        };
        let token = http
            .headers
            .iter()
            .find_map(|h| h.value.strip_prefix("Bearer "))
            .unwrap_or_default()
            .to_owned();
        let answering = AbortOnDropHandle::new(tokio::spawn(async move {
            while let Some(call) = calls.recv().await {
                let BridgeAnswer { text, is_error } = answer(&call.tool_name, &call.arguments);
                // A `false` means the client gave up on the call; nothing is left to do.
                let _delivered = call.resolve(ToolReply { text, is_error });
            }
        }));
        Ok(Self {
            bridge,
            url: http.url,
            token,
            tools: catalog
                .tools()
                .map(|tool| BridgeTool {
                    name: tool.original.clone(),
                    mcp_name: tool.mcp_name.clone(),
                })
                .collect(),
            answering,
            _stop: stop.drop_guard(),
        })
    }

    /// The MCP endpoint, `http://127.0.0.1:<port>/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The bearer token every request must carry (`Authorization: Bearer <token>`).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The exported tools, in the order given.
    pub fn tools(&self) -> &[BridgeTool] {
        &self.tools
    }

    /// Stops serving the way a turn closes its bridge: in-flight calls are answered, the
    /// port is released.
    pub async fn close(self) {
        self.bridge.close().await;
        self.answering.abort();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn a_tool_that_cannot_be_exported_fails_as_in_a_turn() {
        let tools = [ToolSchema {
            name: "t".into(),
            description: String::new(),
            parameters: json!({"type": "string"}),
        }];
        let refused = StandaloneBridge::start(&tools, |_, _| BridgeAnswer {
            text: String::new(),
            is_error: false,
        })
        .await
        .err()
        .map(|e| e.code);
        assert_eq!(refused, Some(LlmErrorCode::AcpToolCatalogInvalid));
    }
}
