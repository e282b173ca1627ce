//! The private MCP bridge: one per tool turn. It binds `127.0.0.1:0`, requires a fresh
//! 256-bit bearer token on every request, serves rmcp's stateless Streamable HTTP on
//! `POST /mcp` only, and turns each valid `tools/call` into a [`ParkedCall`] for DSH.

mod catalog;
mod catalog_cache;
mod guard;
mod handler;
mod parked;
mod replays;

use std::collections::HashSet;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{HttpHeader, McpServer, McpServerHttp};
use axum::Router;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};
use tokio_util::task::AbortOnDropHandle;

pub(crate) use catalog::ToolCatalog;
#[cfg(test)]
pub(crate) use catalog_cache::digest_of as tools_digest;
pub(crate) use catalog_cache::{CatalogCache, OfferedTools};
pub(crate) use handler::MAX_PENDING_CALLS;
pub(crate) use parked::{ParkedCall, ToolReply};

use crate::error::AdapterError;
use guard::GuardPolicy;
use handler::BridgeHandler;

/// The MCP server name the bridge is announced under; permission requests must name it
/// exactly.
pub(crate) const BRIDGE_SERVER_NAME: &str = "dsh";
/// The largest request body the bridge reads. rmcp alone enforces it, while it streams
/// the body, so a larger body is answered 413 whether it comes with a `Content-Length` or
/// chunked (a second limit in front of rmcp turned the chunked case into a 500).
pub(crate) const MAX_BODY_BYTES: usize = 1024 * 1024;
/// How long a closing bridge waits for in-flight requests before it is aborted.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// Who the bridge is, as permission requests must name it.
#[derive(Debug, Clone)]
pub(crate) struct BridgeIdentity {
    /// The MCP server name.
    pub(crate) server: String,
    /// The exported (hashed) tool names.
    pub(crate) tools: HashSet<String>,
}

/// A running bridge. It owns its serve task and both tokens: dropping the bridge without
/// [`Bridge::close`] (a panicking turn, say) still settles parked calls, cancels rmcp's
/// token and aborts the task, which releases the port.
#[derive(Debug)]
pub(crate) struct Bridge {
    address: SocketAddr,
    token: String,
    identity: BridgeIdentity,
    closing: DropGuard,
    service_stop: DropGuard,
    task: AbortOnDropHandle<()>,
}

/// 32 random bytes from the operating system, hex-encoded.
fn fresh_token() -> Result<String, AdapterError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| AdapterError::Bridge(std::io::Error::other(e.to_string())))?;
    Ok(hex::encode(bytes))
}

impl Bridge {
    /// Binds a fresh endpoint serving `catalog`; valid calls go to `calls`.
    pub(crate) async fn start(
        catalog: Arc<ToolCatalog>,
        calls: mpsc::Sender<ParkedCall>,
        parent: &CancellationToken,
    ) -> Result<Self, AdapterError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(AdapterError::Bridge)?;
        let address = listener.local_addr().map_err(AdapterError::Bridge)?;
        let token = fresh_token()?;
        let closing = parent.child_token();
        let service_stop = CancellationToken::new();
        let hosts = vec![
            format!("127.0.0.1:{}", address.port()),
            format!("localhost:{}", address.port()),
        ];
        let identity = BridgeIdentity {
            server: BRIDGE_SERVER_NAME.to_owned(),
            tools: catalog.tools().map(|t| t.mcp_name.clone()).collect(),
        };
        let handler = BridgeHandler::new(catalog, calls, closing.clone());
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_allowed_hosts(hosts.clone())
            .enforce_origin_validation()
            .with_max_request_body_bytes(MAX_BODY_BYTES)
            // rmcp's own token is cancelled only after in-flight calls were answered
            // (see `close`): cancelling it first would answer them with a bare 500.
            .with_cancellation_token(service_stop.clone());
        let service = StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        let policy = Arc::new(GuardPolicy {
            authorization: format!("Bearer {token}"),
            hosts,
        });
        // The guard is the outermost layer: a request without the token learns nothing,
        // not even that its body is too large.
        let app = Router::new()
            .route_service("/mcp", service)
            .layer(axum::middleware::from_fn_with_state(policy, guard::guard));
        let shutdown = closing.clone();
        let task = AbortOnDropHandle::new(tokio::spawn(crate::diagnostics::counted(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(async move { shutdown.cancelled().await })
                .await;
            if let Err(error) = served {
                tracing::warn!(kind = ?error.kind(), "the MCP bridge stopped serving");
            }
        })));
        Ok(Self {
            address,
            token,
            identity,
            closing: closing.drop_guard(),
            service_stop: service_stop.drop_guard(),
            task,
        })
    }

    /// The ACP `mcpServers` entry that lends the bridge to the server.
    pub(crate) fn descriptor(&self) -> McpServer {
        McpServer::Http(
            McpServerHttp::new(BRIDGE_SERVER_NAME, format!("http://{}/mcp", self.address)).headers(
                vec![HttpHeader::new(
                    "Authorization",
                    format!("Bearer {}", self.token),
                )],
            ),
        )
    }

    /// The identity permission requests are checked against.
    pub(crate) fn identity(&self) -> &BridgeIdentity {
        &self.identity
    }

    /// Stops serving: parked requests are answered with an error result, the port is
    /// released.
    pub(crate) async fn close(self) {
        // Dropping the guard cancels `closing`: parked calls are answered, serving winds
        // down gracefully.
        drop(self.closing);
        let mut task = self.task;
        if tokio::time::timeout(CLOSE_GRACE, &mut task).await.is_err() {
            task.abort();
            // An aborted task resolves at once; its result says only that it was aborted.
            let _aborted = task.await;
        }
        // Dropping the guard cancels rmcp's token, after in-flight calls were answered.
        drop(self.service_stop);
    }
}

#[cfg(test)]
mod tests;
