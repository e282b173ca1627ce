//! `BridgeHandler`: the MCP server behind the bridge (rmcp). It lists the turn's catalog,
//! validates each `tools/call` against the original schema, and parks valid calls for DSH;
//! invalid arguments are answered to the model as `isError` results and never reach DSH; a
//! request seen before (same id, tool and arguments) is refused (`replays.rs`).

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::catalog::ToolCatalog;
use super::parked::{ParkedCall, ToolReply};
use super::replays::SeenCalls;

/// At most this many calls of one turn may be parked at once.
pub(crate) const MAX_PENDING_CALLS: usize = 64;

/// State shared by every request of one bridge.
#[derive(Debug)]
struct BridgeShared {
    catalog: Arc<ToolCatalog>,
    calls: mpsc::Sender<ParkedCall>,
    pending: Arc<Semaphore>,
    closing: CancellationToken,
    seen: SeenCalls,
}

/// The rmcp server handler; cloned for every stateless request.
#[derive(Debug, Clone)]
pub(crate) struct BridgeHandler {
    shared: Arc<BridgeShared>,
}

impl BridgeHandler {
    pub(crate) fn new(
        catalog: Arc<ToolCatalog>,
        calls: mpsc::Sender<ParkedCall>,
        closing: CancellationToken,
    ) -> Self {
        Self {
            shared: Arc::new(BridgeShared {
                catalog,
                calls,
                pending: Arc::new(Semaphore::new(MAX_PENDING_CALLS)),
                closing,
                seen: SeenCalls::default(),
            }),
        }
    }
}

fn error_result(text: String) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(text)]).into()
}

impl ServerHandler for BridgeHandler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("dsh-bridge", env!("CARGO_PKG_VERSION")))
            .with_instructions("DSH's tools. Each call is run by DSH under its own permissions.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.shared.catalog.mcp_tools(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.shared.catalog.get(name).map(|tool| tool.to_mcp())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let shared = &self.shared;
        let asked = Value::Object(request.arguments.clone().unwrap_or_default());
        if !shared.seen.first_time(&context.id, &request.name, &asked) {
            // The same request again (a replay): the first one is DSH's call.
            return Err(ErrorData::invalid_request(
                "this tools/call was already received (same id, tool and arguments)",
                None,
            ));
        }
        let Some(tool) = shared.catalog.get(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                None,
            ));
        };
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        if let Err(problems) = tool.validate(&arguments) {
            return Ok(error_result(format!(
                "invalid arguments for {}: {problems}",
                tool.original
            )));
        }
        let Ok(_permit) = shared.pending.clone().try_acquire_owned() else {
            return Ok(error_result(format!(
                "too many pending tool calls (at most {MAX_PENDING_CALLS} per turn)"
            )));
        };
        let (parked, reply) = ParkedCall::new(tool.original.clone(), arguments);
        tokio::select! {
            sent = shared.calls.send(parked) => {
                if sent.is_err() {
                    return Ok(error_result("the DSH turn has ended".to_owned()));
                }
            }
            () = shared.closing.cancelled() => {
                return Ok(error_result("the DSH turn has ended".to_owned()));
            }
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the request was cancelled", None));
            }
        }
        tokio::select! {
            answer = reply => Ok(match answer {
                Ok(ToolReply { text, is_error: false }) =>
                    CallToolResult::success(vec![ContentBlock::text(text)]).into(),
                Ok(ToolReply { text, is_error: true }) => error_result(text),
                Err(_) => error_result("the DSH turn ended before this call was answered".to_owned()),
            }),
            () = shared.closing.cancelled() =>
                Ok(error_result("the DSH turn ended before this call was answered".to_owned())),
            () = context.ct.cancelled() =>
                Err(ErrorData::internal_error("the request was cancelled", None)),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::bridge::catalog::mcp_name;
    use crate::contract::ToolSchema;

    fn handler() -> Result<BridgeHandler, crate::error::AdapterError> {
        let catalog = ToolCatalog::build(&[ToolSchema {
            name: "read.file".into(),
            description: "Reads a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }])?;
        let (calls, _) = mpsc::channel(1);
        Ok(BridgeHandler::new(
            Arc::new(catalog),
            calls,
            CancellationToken::new(),
        ))
    }

    /// The bridge introduces itself as `dsh-bridge` with the tools capability.
    #[test]
    fn the_server_info_names_the_bridge_and_offers_tools() -> crate::TestResult {
        let info = handler()?.get_info();
        assert_eq!(info.server_info.name, "dsh-bridge");
        assert_eq!(info.server_info.version, env!("CARGO_PKG_VERSION"));
        assert!(info.capabilities.tools.is_some());
        Ok(())
    }

    /// One tool is looked up by its exported name, with its original name as title; any
    /// other name (the original included) finds nothing.
    #[test]
    fn a_single_tool_is_found_by_its_exported_name_only() -> crate::TestResult {
        let handler = handler()?;
        let tool = handler
            .get_tool(&mcp_name("read.file"))
            .ok_or("the exported tool was not found")?;
        assert_eq!(tool.name, mcp_name("read.file"));
        assert_eq!(tool.title.as_deref(), Some("read.file"));
        assert!(handler.get_tool("read.file").is_none());
        assert!(handler.get_tool("nope").is_none());
        Ok(())
    }
}
