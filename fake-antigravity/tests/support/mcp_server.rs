//! A tiny real MCP server (rmcp, stateless Streamable HTTP, JSON responses) on
//! 127.0.0.1:0 with one tool, `echo_text` titled "Echo", that records the
//! `Authorization` header of every `tools/call`. In front of rmcp, a layer records the
//! `MCP-Protocol-Version` header of every request and, like the adapter's bridge, lets
//! the 1.3.0 harness's `2026-07-28` through as `2025-11-25` (plain rmcp refuses it). A gated server ([`TestMcpServer::start_gated`])
//! answers no call before a given number of calls are in flight at once.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// One `tools/call` the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedCall {
    /// The tool name.
    pub tool: String,
    /// The arguments.
    pub arguments: serde_json::Value,
    /// The `Authorization` header, verbatim.
    pub authorization: Option<String>,
}

#[derive(Clone)]
struct EchoServer {
    calls: Arc<Mutex<Vec<ReceivedCall>>>,
    gate: Option<Gate>,
}

/// Holds every call until `wanted` calls have arrived (bounded by [`super::WAIT`]).
#[derive(Clone)]
struct Gate {
    wanted: usize,
    arrived: Arc<tokio::sync::watch::Sender<usize>>,
}

impl Gate {
    /// Counts this call in and waits for the others; false if they never came.
    async fn pass(&self) -> bool {
        self.arrived.send_modify(|n| *n += 1);
        let mut arrived = self.arrived.subscribe();
        let wanted = self.wanted;
        tokio::time::timeout(super::WAIT, arrived.wait_for(|n| *n >= wanted))
            .await
            .is_ok_and(|seen| seen.is_ok())
    }
}

impl ServerHandler for EchoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("test-bridge", "0.0.1"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        let schema = serde_json::from_value(schema).expect("schema");
        let tool = Tool::new("echo_text", "Echoes its text", Arc::new(schema)).with_title("Echo");
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let authorization = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.headers.get("authorization"))
            .and_then(|value| value.to_str().ok())
            .map(str::to_string);
        let arguments = serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
        let text = arguments["text"].as_str().unwrap_or_default().to_string();
        self.calls.lock().unwrap().push(ReceivedCall {
            tool: request.name.to_string(),
            arguments,
            authorization,
        });
        if let Some(gate) = &self.gate
            && !gate.pass().await
        {
            let message = format!("only some of {} calls were ever in flight", gate.wanted);
            return Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into());
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("echo: {text}"))]).into())
    }
}

/// One HTTP request's method and `MCP-Protocol-Version` header (`-` when absent).
pub type SeenRequest = (String, String);

async fn record_version(
    axum::extract::State(seen): axum::extract::State<Arc<Mutex<Vec<SeenRequest>>>>,
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let version = request
        .headers()
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
        .to_string();
    seen.lock()
        .unwrap()
        .push((request.method().to_string(), version.clone()));
    if version == "2026-07-28" {
        request.headers_mut().insert(
            "mcp-protocol-version",
            http::HeaderValue::from_static("2025-11-25"),
        );
    }
    next.run(request).await
}

/// The running server.
pub struct TestMcpServer {
    /// `http://127.0.0.1:<port>/mcp`.
    pub url: String,
    calls: Arc<Mutex<Vec<ReceivedCall>>>,
    seen: Arc<Mutex<Vec<SeenRequest>>>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl TestMcpServer {
    /// Binds 127.0.0.1:0 and serves.
    pub async fn start() -> Self {
        Self::serve(None).await
    }

    /// Like [`Self::start`], but no call is answered before `wanted` calls have arrived and
    /// are all in flight; if they do not within [`super::WAIT`], each waiting call gets an
    /// `isError` result saying so.
    pub async fn start_gated(wanted: usize) -> Self {
        let (arrived, _) = tokio::sync::watch::channel(0);
        Self::serve(Some(Gate {
            wanted,
            arrived: Arc::new(arrived),
        }))
        .await
    }

    async fn serve(gate: Option<Gate>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let stop = CancellationToken::new();
        let handler = EchoServer {
            calls: calls.clone(),
            gate,
        };
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_cancellation_token(stop.child_token());
        let service = StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        let seen = Arc::new(Mutex::new(Vec::new()));
        let app = axum::Router::new().route_service("/mcp", service).layer(
            axum::middleware::from_fn_with_state(seen.clone(), record_version),
        );
        let shutdown = stop.clone();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move { shutdown.cancelled().await })
                .await
                .unwrap();
        });
        Self {
            url: format!("http://{addr}/mcp"),
            calls,
            seen,
            stop,
            task,
        }
    }

    /// The calls received so far.
    pub fn calls(&self) -> Vec<ReceivedCall> {
        self.calls.lock().unwrap().clone()
    }

    /// Every request so far: its HTTP method and `MCP-Protocol-Version` header.
    pub fn seen(&self) -> Vec<SeenRequest> {
        self.seen.lock().unwrap().clone()
    }

    /// Stops serving.
    pub async fn stop(self) {
        self.stop.cancel();
        self.task.await.unwrap();
    }
}
