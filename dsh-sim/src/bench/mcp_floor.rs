//! The MCP floors, on loopback in this process: a raw HTTP POST echoed by axum and read by
//! reqwest (no MCP at all), and a bare rmcp client calling one tool of an rmcp stateless
//! Streamable HTTP server configured as the adapter's bridge is (JSON responses, no
//! sessions, no SSE keep-alive), with no guard, catalogue or DSH behind it. The rmcp
//! client either keeps its connections (a pooling reqwest client) or opens one per request
//! (rmcp 3.11's default client, built with `pool_max_idle_per_host(0)`), so each of the
//! adapter's tool-round rows has the floor of its own connection habit; and a client's
//! whole first call (`initialize`, `tools/list`, `tools/call` on a new client) is the MCP
//! half of the first tool stream's floor.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use axum::Router;
use axum::routing::post;
use clap::ValueEnum;
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

use super::rounds::Connections;

/// A loopback HTTP server that lives as long as this value.
struct Served {
    address: SocketAddr,
    stop: CancellationToken,
    _task: AbortOnDropHandle<()>,
}

impl Served {
    /// The MCP endpoint's URL.
    fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }
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
pub async fn rmcp_round_trips(
    calls: usize,
    connections: Connections,
) -> anyhow::Result<Vec<Duration>> {
    rmcp_rounds(calls, 1, connections).await
}

/// The rmcp echo server, served on loopback until the returned values are dropped.
async fn echo_server() -> anyhow::Result<(Served, CancellationToken)> {
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
    Ok((served, stop))
}

/// A bare rmcp client of `served`, holding its connections as `connections` says; it has
/// sent `initialize` and `notifications/initialized`.
async fn rmcp_client(
    url: &str,
    connections: Connections,
) -> anyhow::Result<rmcp::service::RunningService<rmcp::RoleClient, ()>> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    let transport = match connections {
        Connections::Fresh => StreamableHttpClientTransport::from_config(config),
        Connections::KeptAlive => StreamableHttpClientTransport::with_client(
            reqwest::Client::builder().no_proxy().build()?,
            config,
        ),
    };
    ().serve(transport)
        .await
        .map_err(|e| anyhow!("the rmcp floor client did not connect: {e}"))
}

fn echo_arguments() -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
    serde_json::json!({"n": 1})
        .as_object()
        .cloned()
        .context("arguments")
}

/// `rounds` rounds of `width` concurrent `tools/call`s from one bare rmcp client to an
/// rmcp stateless server, after a warm-up; each round's duration, until all are answered.
pub async fn rmcp_rounds(
    rounds: usize,
    width: usize,
    connections: Connections,
) -> anyhow::Result<Vec<Duration>> {
    let (served, stop) = echo_server().await?;
    let durations = client_rounds(&served.url(), rounds, width, connections).await;
    stop.cancel();
    drop(served);
    durations
}

/// `rounds` rounds of `width` concurrent `tools/call`s to the echo server at `url`, from
/// one client, after a warm-up; each round's duration.
async fn client_rounds(
    url: &str,
    rounds: usize,
    width: usize,
    connections: Connections,
) -> anyhow::Result<Vec<Duration>> {
    let client = rmcp_client(url, connections).await?;
    let arguments = echo_arguments()?;
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
    Ok(durations)
}

/// `count` times, after a warm-up: a new rmcp client (fresh connections, as the fake's
/// default) sends `initialize`, `tools/list` and one `tools/call` to the echo server at
/// `url`, as a server does on its first tool call in a session; from the connect to the
/// call's answer.
async fn client_first_calls(url: &str, count: usize) -> anyhow::Result<Vec<Duration>> {
    let arguments = echo_arguments()?;
    let mut durations = Vec::with_capacity(count);
    for i in 0..count + warm_up(count) {
        let started = Instant::now();
        let client = rmcp_client(url, Connections::Fresh).await?;
        client
            .list_tools(None)
            .await
            .map_err(|e| anyhow!("the rmcp floor's tools/list failed: {e}"))?;
        client
            .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments.clone()))
            .await
            .map_err(|e| anyhow!("the rmcp floor's call failed: {e}"))?;
        if i >= warm_up(count) {
            durations.push(started.elapsed());
        }
        let _closed = client.cancel().await;
    }
    Ok(durations)
}

/// What a bare rmcp client in a child process (`dsh-sim bench-mcp-client`) measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClientWork {
    /// Rounds of concurrent `tools/call`s on one client.
    Rounds,
    /// A new client's `initialize`, `tools/list` and `tools/call`, again and again.
    FirstCalls,
}

/// The bare rmcp client's work in a child process (`dsh-sim bench-mcp-client`), against
/// the echo server in this one: the MCP client lives in the server's process and the
/// bridge in DSH's, so every MCP request crosses processes, as the floor's do here.
/// Each measured duration, in the child's own timing.
pub async fn rmcp_from_child(
    program: &std::path::Path,
    work: ClientWork,
    rounds: usize,
    width: usize,
    connections: Connections,
) -> anyhow::Result<Vec<Duration>> {
    let (served, stop) = echo_server().await?;
    let name = |value: Option<clap::builder::PossibleValue>| {
        value.map(|v| v.get_name().to_owned()).unwrap_or_default()
    };
    let (work, kept) = (
        name(work.to_possible_value()),
        name(connections.to_possible_value()),
    );
    let output = tokio::process::Command::new(program)
        .args(["bench-mcp-client", "--url", &served.url(), "--work", &work])
        .args([
            "--rounds",
            &rounds.to_string(),
            "--width",
            &width.to_string(),
        ])
        .args(["--connections", &kept])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .output()
        .await?;
    stop.cancel();
    drop(served);
    if !output.status.success() {
        anyhow::bail!("dsh-sim bench-mcp-client failed: {}", output.status);
    }
    let ms: Vec<f64> = serde_json::from_slice(&output.stdout)
        .context("dsh-sim bench-mcp-client printed no list of durations")?;
    Ok(ms
        .into_iter()
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .collect())
}

/// `dsh-sim bench-mcp-client`: runs `work` against the echo server at `url` and returns
/// each duration in milliseconds, for [`rmcp_from_child`].
pub async fn client_work(
    url: &str,
    work: ClientWork,
    rounds: usize,
    width: usize,
    connections: Connections,
) -> anyhow::Result<Vec<f64>> {
    let durations = match work {
        ClientWork::Rounds => client_rounds(url, rounds, width, connections).await?,
        ClientWork::FirstCalls => client_first_calls(url, rounds).await?,
    };
    Ok(durations.iter().map(|d| d.as_secs_f64() * 1000.0).collect())
}
