//! The MCP floors, on loopback in this process: a raw HTTP POST echoed by axum and read by
//! reqwest (no MCP at all), and a bare rmcp client calling one tool of an rmcp stateless
//! Streamable HTTP server configured as the adapter's bridge is (JSON responses, no
//! sessions, no keep-alive), with no guard, catalogue or DSH behind it.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use axum::Router;
use axum::routing::post;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

/// A loopback HTTP server that lives as long as this value.
struct Served {
    address: SocketAddr,
    stop: CancellationToken,
    _task: AbortOnDropHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn serve(app: Router) -> anyhow::Result<Served> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let address = listener.local_addr()?;
    let stop = CancellationToken::new();
    let shutdown = stop.clone();
    let task = tokio::spawn(async move {
        let _served = axum::serve(listener, app)
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await;
    });
    Ok(Served {
        address,
        stop,
        _task: AbortOnDropHandle::new(task),
    })
}

/// `calls` sequential raw POSTs (a small JSON body echoed back), after a warm-up; each
/// one's duration.
pub async fn raw_http_round_trips(calls: usize) -> anyhow::Result<Vec<Duration>> {
    let served =
        serve(Router::new().route("/echo", post(|body: String| async move { body }))).await?;
    let url = format!("http://{}/echo", served.address);
    let client = reqwest::Client::builder().no_proxy().build()?;
    let body = json_call_body();
    let mut durations = Vec::with_capacity(calls);
    for i in 0..calls + warm_up(calls) {
        let started = Instant::now();
        let answer = client.post(&url).body(body.clone()).send().await?;
        answer.error_for_status()?.bytes().await?;
        if i >= warm_up(calls) {
            durations.push(started.elapsed());
        }
    }
    Ok(durations)
}

/// The body of a `tools/call` as the fake sends it.
fn json_call_body() -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "echo_0123456789ab", "arguments": {"n": 1}}})
    .to_string()
}

fn warm_up(calls: usize) -> usize {
    (calls / 10).max(5)
}

/// The one-tool server of the rmcp floor.
#[derive(Clone)]
struct EchoServer {
    tool: Tool,
}

impl ServerHandler for EchoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("bench-floor", "0.1.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![self.tool.clone()]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == self.tool.name).then(|| self.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let text = serde_json::to_string(&request.arguments).unwrap_or_default();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// `calls` sequential `tools/call`s from a bare rmcp client to an rmcp stateless server,
/// after a warm-up; each one's duration.
pub async fn rmcp_round_trips(calls: usize) -> anyhow::Result<Vec<Duration>> {
    rmcp_rounds(calls, 1).await
}

/// `rounds` rounds of `width` concurrent `tools/call`s from one bare rmcp client to an
/// rmcp stateless server, after a warm-up; each round's duration, until all are answered.
pub async fn rmcp_rounds(rounds: usize, width: usize) -> anyhow::Result<Vec<Duration>> {
    let schema = serde_json::from_value(serde_json::json!({
        "type": "object", "properties": {"n": {"type": "integer"}}
    }))?;
    let handler = EchoServer {
        tool: Tool::new("echo", "Echoes its arguments.", Arc::new(schema)),
    };
    let stop = CancellationToken::new();
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
    let served = serve(Router::new().route_service("/mcp", service)).await?;
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("http://{}/mcp", served.address)),
    );
    let client = ()
        .serve(transport)
        .await
        .map_err(|e| anyhow!("the rmcp floor client did not connect: {e}"))?;
    let arguments = serde_json::json!({"n": 1})
        .as_object()
        .cloned()
        .context("arguments")?;
    let mut durations = Vec::with_capacity(rounds);
    for i in 0..rounds + warm_up(rounds) {
        let started = Instant::now();
        let calls = (0..width).map(|_| {
            client.call_tool(CallToolRequestParams::new("echo").with_arguments(arguments.clone()))
        });
        futures::future::try_join_all(calls)
            .await
            .map_err(|e| anyhow!("the rmcp floor call failed: {e}"))?;
        if i >= warm_up(rounds) {
            durations.push(started.elapsed());
        }
    }
    let _closed = client.cancel().await;
    stop.cancel();
    drop(served);
    Ok(durations)
}
