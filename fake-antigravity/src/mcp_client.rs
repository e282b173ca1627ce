//! The fake's MCP client, as 1.3.0 uses host tools: a real Streamable-HTTP client (rmcp)
//! per `http` server of a session, connected lazily on first use with the exact headers
//! given at `session/new`, then `initialize`, `tools/list`, `tools/call`. Every request and
//! answer is journaled (`McpRequest` / `McpResponse`).
//!
//! Connections are cached per session and server; the tool list is cached per connection
//! and fetched again when a wanted tool is not in it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest, Implementation,
    ListToolsRequest, PaginatedRequestParams, ProtocolVersion, ServerResult,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{Peer, ServiceExt};
use serde_json::{Value, json};

use crate::catalogue::{AGENT_NAME, AGENT_VERSION};
use crate::journal::JournalEntry;
use crate::journal_writer::JournalWriter;
use crate::mcp_servers::HttpMcpServer;

/// How long the fake waits for `initialize` or `tools/list`.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the fake waits for `tools/call` (the real server gives up after about 180 s).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(180);

/// Why an MCP exchange failed. The texts never include header values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpClientError {
    /// A header from `session/new` is not a valid HTTP header.
    #[error("header `{0}` is not a valid HTTP header")]
    BadHeader(String),
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(String),
    /// The MCP request failed (transport, JSON-RPC error, or unexpected answer).
    #[error("{method} failed: {message}")]
    Request {
        /// The MCP method.
        method: String,
        /// The cause.
        message: String,
    },
    /// The MCP request timed out.
    #[error("{method} timed out after {seconds} s")]
    Timeout {
        /// The MCP method.
        method: String,
        /// The limit.
        seconds: u64,
    },
}

/// Journals one server's MCP traffic.
#[derive(Debug, Clone)]
struct McpJournal {
    journal: Option<Arc<JournalWriter>>,
    server: String,
}

impl McpJournal {
    fn request(&self, method: &str, params: Value) {
        if let Some(journal) = &self.journal {
            journal.record(&JournalEntry::McpRequest {
                server: self.server.clone(),
                method: method.to_string(),
                params,
            });
        }
    }

    fn response(&self, method: &str, outcome: Result<Value, String>) {
        if let Some(journal) = &self.journal {
            let (result, error) = match outcome {
                Ok(result) => (Some(result), None),
                Err(error) => (None, Some(error)),
            };
            journal.record(&JournalEntry::McpResponse {
                server: self.server.clone(),
                method: method.to_string(),
                result,
                error,
            });
        }
    }
}

/// One live connection to a host MCP server.
pub struct McpConnection {
    server: String,
    service: RunningService<RoleClient, ClientConfig>,
    journal: McpJournal,
    tools: tokio::sync::Mutex<Option<Vec<Value>>>,
}

impl std::fmt::Debug for McpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpConnection")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl McpConnection {
    /// Connects and runs `initialize`, sending `server.headers` verbatim.
    async fn connect(
        server: &HttpMcpServer,
        journal: Option<Arc<JournalWriter>>,
    ) -> Result<Self, McpClientError> {
        let journal = McpJournal {
            journal,
            server: server.name.clone(),
        };
        let mut headers = HashMap::new();
        for header in &server.headers {
            let name = HeaderName::from_bytes(header.name.as_bytes())
                .map_err(|_| McpClientError::BadHeader(header.name.clone()))?;
            let value = HeaderValue::from_str(&header.value)
                .map_err(|_| McpClientError::BadHeader(header.name.clone()))?;
            headers.insert(name, value);
        }
        let http = reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| McpClientError::HttpClient(e.to_string()))?;
        let config = StreamableHttpClientTransportConfig::with_uri(server.url.as_str())
            .custom_headers(headers);
        let transport = StreamableHttpClientTransport::with_client(http, config);
        let client_info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new(AGENT_NAME, AGENT_VERSION),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25);
        journal.request(
            "initialize",
            serde_json::to_value(&client_info).unwrap_or(Value::Null),
        );
        let started = tokio::time::timeout(HANDSHAKE_TIMEOUT, client_info.serve(transport)).await;
        let service = match started {
            Ok(Ok(service)) => service,
            Ok(Err(e)) => {
                let error = McpClientError::Request {
                    method: "initialize".into(),
                    message: e.to_string(),
                };
                journal.response("initialize", Err(error.to_string()));
                return Err(error);
            }
            Err(_) => {
                let error = McpClientError::Timeout {
                    method: "initialize".into(),
                    seconds: HANDSHAKE_TIMEOUT.as_secs(),
                };
                journal.response("initialize", Err(error.to_string()));
                return Err(error);
            }
        };
        let peer_info = service
            .peer()
            .peer_info()
            .and_then(|info| serde_json::to_value(info.as_ref()).ok())
            .unwrap_or(Value::Null);
        journal.response("initialize", Ok(peer_info));
        Ok(Self {
            server: server.name.clone(),
            service,
            journal,
            tools: tokio::sync::Mutex::new(None),
        })
    }

    fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
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
        let method = "tools/list";
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
            self.journal.request(
                method,
                serde_json::to_value(&params).unwrap_or_else(|_| json!({})),
            );
            let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
            let answer =
                tokio::time::timeout(HANDSHAKE_TIMEOUT, self.peer().send_request(request)).await;
            let page = match answer {
                Ok(Ok(ServerResult::ListToolsResult(page))) => page,
                Ok(Ok(_)) => return Err(self.failed(method, "unexpected response".into())),
                Ok(Err(e)) => return Err(self.failed(method, e.to_string())),
                Err(_) => return Err(self.timed_out(method, HANDSHAKE_TIMEOUT)),
            };
            let page_json = serde_json::to_value(&page).unwrap_or(Value::Null);
            self.journal.response(method, Ok(page_json.clone()));
            if let Some(items) = page_json.get("tools").and_then(Value::as_array) {
                tools.extend(items.iter().cloned());
            }
            match page.next_cursor {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => return Ok(tools),
            }
        }
    }

    /// `tools/call`; the answer is the CallToolResult as JSON.
    pub async fn call(&self, tool: &str, arguments: &Value) -> Result<Value, McpClientError> {
        let method = "tools/call";
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        self.journal
            .request(method, json!({"name": tool, "arguments": arguments}));
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        match tokio::time::timeout(CALL_TIMEOUT, self.peer().call_tool(params)).await {
            Ok(Ok(result)) => {
                let result = serde_json::to_value(&result).unwrap_or(Value::Null);
                self.journal.response(method, Ok(result.clone()));
                Ok(result)
            }
            Ok(Err(e)) => Err(self.failed(method, e.to_string())),
            Err(_) => Err(self.timed_out(method, CALL_TIMEOUT)),
        }
    }

    /// Journals that an in-flight `tools/call` was abandoned (the prompt was cancelled).
    pub fn abandoned_call(&self) {
        self.journal.response(
            "tools/call",
            Err("abandoned: the prompt was cancelled (session/cancel)".into()),
        );
    }

    fn failed(&self, method: &str, message: String) -> McpClientError {
        let error = McpClientError::Request {
            method: method.to_string(),
            message,
        };
        self.journal.response(method, Err(error.to_string()));
        error
    }

    fn timed_out(&self, method: &str, limit: Duration) -> McpClientError {
        let error = McpClientError::Timeout {
            method: method.to_string(),
            seconds: limit.as_secs(),
        };
        self.journal.response(method, Err(error.to_string()));
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
    journal: Option<Arc<JournalWriter>>,
    connections: tokio::sync::Mutex<HashMap<String, Arc<McpConnection>>>,
}

impl McpPool {
    /// A pool over `servers` (the session's `http` entries, in order). Nothing connects yet.
    pub fn new(servers: Vec<HttpMcpServer>, journal: Option<Arc<JournalWriter>>) -> Self {
        Self {
            servers,
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
        let connection = Arc::new(McpConnection::connect(server, self.journal.clone()).await?);
        connections.insert(server.name.clone(), connection.clone());
        Ok(connection)
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
                    return Ok(ResolvedTool {
                        server: server.name.clone(),
                        name,
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
