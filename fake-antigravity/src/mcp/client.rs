//! The fake's MCP client, as the 1.3.0 harness uses host tools: a plain Streamable-HTTP
//! client per `http` server of a session, connected lazily on first use with the exact
//! headers given at `session/new`, then `initialize`, `notifications/initialized`,
//! `tools/list`, `tools/call`. Every request and answer is journaled (`McpRequest` /
//! `McpResponse`).
//!
//! Like the real harness (docs/antigravity-1.3.0.md §20) it announces its own protocol version
//! (`mcp_client.protocol_version`, default `2026-07-28`) in `initialize`; the
//! `MCP-Protocol-Version` header of every later request follows
//! `mcp_client.version_header` (`script/mcp_version_header.rs`: by default the negotiated
//! version, as the MCP spec requires; or the announced one; or none). It is written on
//! plain HTTP (not rmcp's client, which always sends the negotiated version) so that the
//! other two can be played.
//!
//! Connections are cached per session and server; the tool list is cached per connection
//! and fetched again when a wanted tool is not in it (or at every prompt, when the script
//! says so). `mcp_client.fault` makes one `tools/call` misbehave (`faults/mcp_fault_calls.rs`); every
//! request and response is journaled with its JSON-RPC id (`mcp/exchange.rs`, which the
//! faults share).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use serde_json::{Value, json};

use crate::acp::catalogue::{AGENT_NAME, AGENT_VERSION};
use crate::faults::mcp_faults::McpFault;
use crate::journal::writer::JournalWriter;
use crate::script::McpClientScript;

use super::exchange::{McpClientError, McpJournal, answer_in_body, is_event_stream};
use crate::faults::mcp_fault_calls;
use crate::script::mcp_version_header::VersionHeader;
use crate::state::mcp_servers::HttpMcpServer;

/// How long the fake waits for `initialize`, `tools/list` or a notification.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// The HTTP side of one connection.
#[derive(Debug)]
struct HttpRpc {
    http: reqwest::Client,
    url: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// The `MCP-Protocol-Version` header of versioned requests (`None`: none is sent).
    version: std::sync::Mutex<Option<HeaderValue>>,
    session_id: std::sync::Mutex<Option<HeaderValue>>,
    next_id: AtomicU64,
}

impl HttpRpc {
    fn request(&self, method: reqwest::Method, versioned: bool) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .request(method, &self.url)
            .header("accept", "application/json, text/event-stream");
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let version = self.version.lock().ok().and_then(|v| v.clone());
        if let (true, Some(version)) = (versioned, version) {
            request = request.header("mcp-protocol-version", version);
        }
        let session = self.session_id.lock().ok().and_then(|s| s.clone());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request
    }

    /// POSTs one request and returns its `result` (or the JSON-RPC error as text).
    async fn call(
        &self,
        id: u64,
        method: &str,
        params: Value,
        versioned: bool,
        limit: Duration,
    ) -> Result<Value, McpClientError> {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let failed = |message: String| McpClientError::Request {
            method: method.to_string(),
            message,
        };
        let exchange = async {
            let response = self
                .request(reqwest::Method::POST, versioned)
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .map_err(|e| failed(format!("transport: {e}")))?;
            let status = response.status();
            if let Some(session) = response.headers().get("mcp-session-id")
                && let Ok(mut slot) = self.session_id.lock()
            {
                *slot = Some(session.clone());
            }
            let event_stream = is_event_stream(response.headers());
            let text = response
                .text()
                .await
                .map_err(|e| failed(format!("transport: {e}")))?;
            if !status.is_success() {
                return Err(failed(format!("HTTP {}", status.as_u16())));
            }
            let message = answer_in_body(&text, event_stream, id)
                .ok_or_else(|| failed("no JSON-RPC answer in the body".into()))?;
            if let Some(error) = message.get("error") {
                return Err(failed(format!("JSON-RPC error {error}")));
            }
            message
                .get("result")
                .cloned()
                .ok_or_else(|| failed("an answer with no result".into()))
        };
        match tokio::time::timeout(limit, exchange).await {
            Ok(outcome) => outcome,
            Err(_) => Err(McpClientError::Timeout {
                method: method.to_string(),
                millis: limit.as_millis(),
            }),
        }
    }

    /// POSTs a notification; the HTTP status it was answered with.
    async fn notify(&self, method: &str) -> Result<u16, String> {
        let body = json!({"jsonrpc": "2.0", "method": method});
        let sent = self
            .request(reqwest::Method::POST, true)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send();
        match tokio::time::timeout(HANDSHAKE_TIMEOUT, sent).await {
            Ok(Ok(response)) => Ok(response.status().as_u16()),
            Ok(Err(e)) => Err(format!("transport: {e}")),
            Err(_) => Err("timed out".into()),
        }
    }

    /// Opens (and at once drops) a GET stream; the HTTP status it was answered with.
    async fn open_stream(&self) -> Result<u16, String> {
        let sent = self.request(reqwest::Method::GET, true).send();
        match tokio::time::timeout(HANDSHAKE_TIMEOUT, sent).await {
            Ok(Ok(response)) => Ok(response.status().as_u16()),
            Ok(Err(e)) => Err(format!("transport: {e}")),
            Err(_) => Err("timed out".into()),
        }
    }
}

/// One live connection to a host MCP server.
#[derive(Debug)]
pub struct McpConnection {
    rpc: HttpRpc,
    journal: McpJournal,
    call_timeout: Duration,
    tools: tokio::sync::Mutex<Option<Vec<Value>>>,
    fault: Option<McpFault>,
}

impl McpConnection {
    /// Connects: `initialize` announcing the script's version, `notifications/initialized`
    /// (which must be answered 202) and, when the script says so, a GET stream (which must
    /// be answered 200 or 405). Sends `server.headers` verbatim on every request.
    async fn connect(
        server: &HttpMcpServer,
        settings: &McpClientScript,
        journal: Option<Arc<JournalWriter>>,
    ) -> Result<Self, McpClientError> {
        let journal = McpJournal::new(journal, server.name.clone());
        let mut headers = Vec::new();
        for header in &server.headers {
            let name = HeaderName::from_bytes(header.name.as_bytes())
                .map_err(|_| McpClientError::BadHeader(header.name.clone()))?;
            let value = HeaderValue::from_str(&header.value)
                .map_err(|_| McpClientError::BadHeader(header.name.clone()))?;
            headers.push((name, value));
        }
        let announced = HeaderValue::from_str(&settings.protocol_version)
            .map_err(|_| McpClientError::BadHeader("MCP-Protocol-Version".into()))?;
        // Until `initialize` is answered, only `header_on_initialize` reads this.
        let version = (settings.version_header != VersionHeader::Absent).then_some(announced);
        // Without keep-alive, no idle connection is kept: every request opens its own.
        let idle_per_host = if settings.keep_alive { usize::MAX } else { 0 };
        let http = reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(idle_per_host)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| McpClientError::HttpClient(e.to_string()))?;
        let connection = Self {
            rpc: HttpRpc {
                http,
                url: server.url.clone(),
                headers,
                version: std::sync::Mutex::new(version),
                session_id: std::sync::Mutex::new(None),
                next_id: AtomicU64::new(0),
            },
            journal,
            call_timeout: Duration::from_millis(settings.call_timeout_ms),
            tools: tokio::sync::Mutex::new(None),
            fault: settings.fault,
        };
        connection.initialize(settings).await?;
        Ok(connection)
    }

    async fn initialize(&self, settings: &McpClientScript) -> Result<(), McpClientError> {
        let params = json!({
            "protocolVersion": settings.protocol_version,
            "capabilities": {},
            "clientInfo": {"name": AGENT_NAME, "version": AGENT_VERSION},
        });
        let versioned = settings.header_on_initialize;
        let answer = self
            .exchange("initialize", params, versioned, HANDSHAKE_TIMEOUT)
            .await?;
        let header = settings
            .version_header
            .after_initialize(&settings.protocol_version, &answer);
        if let Ok(mut slot) = self.rpc.version.lock() {
            *slot = header;
        }
        self.expect_status(
            "notifications/initialized",
            &[202],
            self.rpc.notify("notifications/initialized").await,
        )?;
        if settings.open_get_stream {
            self.expect_status("GET", &[200, 405], self.rpc.open_stream().await)?;
        }
        Ok(())
    }

    /// Journals a notification or GET (`method`) and its status, failing on any status
    /// the MCP spec does not allow.
    fn expect_status(
        &self,
        method: &str,
        allowed: &[u16],
        status: Result<u16, String>,
    ) -> Result<(), McpClientError> {
        self.journal.request(method, Value::Null, None);
        match status {
            Ok(status) if allowed.contains(&status) => {
                self.journal
                    .response(method, None, Ok(json!({"status": status})), None);
                Ok(())
            }
            Ok(status) => Err(self.failed(
                method,
                format!("HTTP {status}, where the MCP spec allows {allowed:?}"),
            )),
            Err(message) => Err(self.failed(method, message)),
        }
    }

    /// One journaled request/answer.
    async fn exchange(
        &self,
        method: &str,
        params: Value,
        versioned: bool,
        limit: Duration,
    ) -> Result<Value, McpClientError> {
        let id = self.rpc.next_id.fetch_add(1, Ordering::SeqCst);
        self.journal.request(method, params.clone(), Some(id));
        let asked = Some(params.clone());
        match self.rpc.call(id, method, params, versioned, limit).await {
            Ok(result) => {
                self.journal
                    .response(method, asked, Ok(result.clone()), Some(id));
                Ok(result)
            }
            Err(error) => {
                self.journal
                    .response(method, asked, Err(error.to_string()), Some(id));
                Err(error)
            }
        }
    }

    /// The server's tools (as JSON), from the cache or, when `fresh`, from `tools/list`.
    async fn tools(&self, fresh: bool) -> Result<(Vec<Value>, bool), McpClientError> {
        let mut cached = self.tools.lock().await;
        if let Some(tools) = cached.as_ref().filter(|_| !fresh) {
            return Ok((tools.clone(), false));
        }
        let tools = self.list_tools().await?;
        *cached = Some(tools.clone());
        Ok((tools, true))
    }

    async fn list_tools(&self) -> Result<Vec<Value>, McpClientError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let page = self
                .exchange("tools/list", params, true, HANDSHAKE_TIMEOUT)
                .await?;
            if let Some(items) = page.get("tools").and_then(Value::as_array) {
                tools.extend(items.iter().cloned());
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => cursor = Some(next.to_string()),
                _ => return Ok(tools),
            }
        }
    }

    /// `tools/call`; the answer is the CallToolResult as JSON. Gives up after the
    /// script's `mcp_client.call_timeout_ms` (the real server: about 180 s).
    pub async fn call(&self, tool: &str, arguments: &Value) -> Result<Value, McpClientError> {
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        let params = json!({"name": tool, "arguments": arguments});
        if let Some(fault) = mcp_fault_calls::strikes(self.fault) {
            return mcp_fault_calls::faulty_call(
                self.fault_target(mcp_fault_calls::ids_needed(fault.kind)),
                fault,
                params,
            )
            .await;
        }
        self.exchange("tools/call", params, true, self.call_timeout)
            .await
    }

    /// What a fault needs to send requests as this connection does: its URL, every header
    /// a `tools/call` carries, `ids` fresh JSON-RPC ids, and the journal.
    fn fault_target(&self, ids: u64) -> mcp_fault_calls::Target {
        let mut headers = self.rpc.headers.clone();
        // The same version header as every other versioned request (none when absent).
        if let Some(version) = self.rpc.version.lock().ok().and_then(|v| v.clone()) {
            headers.push((HeaderName::from_static("mcp-protocol-version"), version));
        }
        if let Some(session) = self.rpc.session_id.lock().ok().and_then(|s| s.clone()) {
            headers.push((HeaderName::from_static("mcp-session-id"), session));
        }
        mcp_fault_calls::Target {
            http: self.rpc.http.clone(),
            url: self.rpc.url.clone(),
            headers,
            server: self.journal.server().to_owned(),
            first_id: self.rpc.next_id.fetch_add(ids, Ordering::SeqCst),
            journal: self.journal.clone(),
            limit: self.call_timeout,
        }
    }

    /// Journals that an in-flight `tools/call` was abandoned (the prompt was cancelled).
    pub fn abandoned_call(&self) {
        self.journal.response(
            "tools/call",
            None,
            Err("abandoned: the prompt was cancelled (session/cancel)".into()),
            None,
        );
    }

    fn failed(&self, method: &str, message: String) -> McpClientError {
        let error = McpClientError::Request {
            method: method.to_string(),
            message,
        };
        self.journal
            .response(method, None, Err(error.to_string()), None);
        error
    }
}

/// A host tool found on one of the session's servers.
#[derive(Debug, Clone)]
pub struct ResolvedTool {
    /// The server's name from `session/new`.
    pub server: String,
    /// The tool's MCP `name`.
    pub name: String,
    /// The tool's `title` (or `annotations.title`), if any.
    pub title: Option<String>,
    /// The connection to call it on.
    pub connection: Arc<McpConnection>,
}

/// A tool that no server has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ResolveError(pub String);

/// A session's MCP servers and their lazily opened connections.
#[derive(Debug)]
pub struct McpPool {
    servers: Vec<HttpMcpServer>,
    settings: McpClientScript,
    journal: Option<Arc<JournalWriter>>,
    connections: tokio::sync::Mutex<HashMap<String, Arc<McpConnection>>>,
}

impl McpPool {
    /// A pool over `servers` (the session's `http` entries, in order). Nothing connects yet.
    pub fn new(
        servers: Vec<HttpMcpServer>,
        settings: McpClientScript,
        journal: Option<Arc<JournalWriter>>,
    ) -> Self {
        mcp_fault_calls::remember_servers(&servers);
        Self {
            servers,
            settings,
            journal,
            connections: tokio::sync::Mutex::new(HashMap::new()),
        }
    }

    /// Whether the session gave no `http` server.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    async fn connection(
        &self,
        server: &HttpMcpServer,
    ) -> Result<Arc<McpConnection>, McpClientError> {
        let mut connections = self.connections.lock().await;
        if let Some(connection) = connections.get(&server.name) {
            return Ok(connection.clone());
        }
        let connection =
            Arc::new(McpConnection::connect(server, &self.settings, self.journal.clone()).await?);
        connections.insert(server.name.clone(), connection.clone());
        Ok(connection)
    }

    /// Lists every server's tools afresh (connecting first where needed), as the real
    /// client may do at every prompt; the failures, one text per server.
    pub async fn list_all_afresh(&self) -> Vec<String> {
        let mut failures = Vec::new();
        for server in &self.servers {
            let listed = match self.connection(server).await {
                Ok(connection) => connection.tools(true).await.map(|_| ()),
                Err(e) => Err(e),
            };
            if let Err(e) = listed {
                failures.push(format!("{}: {e}", server.name));
            }
        }
        failures
    }

    /// Finds `wanted` by each tool's `title` (or `annotations.title`), then its `name`,
    /// server by server in `session/new` order.
    pub async fn resolve(&self, wanted: &str) -> Result<ResolvedTool, ResolveError> {
        let mut seen = Vec::new();
        for server in &self.servers {
            let connection = match self.connection(server).await {
                Ok(connection) => connection,
                Err(e) => {
                    seen.push(format!("{}: {e}", server.name));
                    continue;
                }
            };
            let mut fresh = false;
            loop {
                let (tools, listed_now) = match connection.tools(fresh).await {
                    Ok(found) => found,
                    Err(e) => {
                        seen.push(format!("{}: {e}", server.name));
                        break;
                    }
                };
                if let Some(name) = find_tool(&tools, wanted) {
                    let title = tools
                        .iter()
                        .find(|tool| tool.get("name").and_then(Value::as_str) == Some(&name))
                        .and_then(tool_title)
                        .map(str::to_string);
                    return Ok(ResolvedTool {
                        server: server.name.clone(),
                        name,
                        title,
                        connection,
                    });
                }
                if listed_now {
                    let names: Vec<String> = tools.iter().filter_map(tool_label).collect();
                    seen.push(format!("{}: tools [{}]", server.name, names.join(", ")));
                    break;
                }
                fresh = true;
            }
        }
        Err(ResolveError(format!(
            "no MCP server has a tool titled or named `{wanted}` ({})",
            seen.join("; ")
        )))
    }
}

fn tool_title(tool: &Value) -> Option<&str> {
    tool.get("title")
        .and_then(Value::as_str)
        .or_else(|| tool.pointer("/annotations/title").and_then(Value::as_str))
}

fn tool_label(tool: &Value) -> Option<String> {
    let name = tool.get("name").and_then(Value::as_str)?;
    Some(match tool_title(tool) {
        Some(title) => format!("{name} \"{title}\""),
        None => name.to_string(),
    })
}

/// The MCP name of the tool whose title, else whose name, is `wanted`.
fn find_tool(tools: &[Value], wanted: &str) -> Option<String> {
    let name_of = |tool: &Value| tool.get("name").and_then(Value::as_str).map(str::to_string);
    tools
        .iter()
        .find(|tool| tool_title(tool) == Some(wanted))
        .and_then(name_of)
        .or_else(|| {
            tools
                .iter()
                .find(|tool| tool.get("name").and_then(Value::as_str) == Some(wanted))
                .and_then(name_of)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_win_over_names() {
        let tools = vec![
            json!({"name": "read", "title": "Shell"}),
            json!({"name": "Shell"}),
            json!({"name": "grep", "annotations": {"title": "Search"}}),
        ];
        assert_eq!(find_tool(&tools, "Shell").as_deref(), Some("read"));
        assert_eq!(find_tool(&tools, "Search").as_deref(), Some("grep"));
        assert_eq!(find_tool(&tools, "grep").as_deref(), Some("grep"));
        assert_eq!(find_tool(&tools, "nope"), None);
    }
}
