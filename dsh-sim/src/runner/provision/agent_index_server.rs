//! The agent index's host, on loopback: serves the agent index document (what the
//! installer's `registry` points at) and the archive over
//! plain HTTP (the installer is told `insecure_loopback`), counts the archive requests,
//! and misbehaves as the scenario asks (404, a stall, a truncated body, a first 503, and
//! the `drop_connection` fault: a body cut at a given byte for a given number of requests).

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio_util::sync::CancellationToken;

use crate::scenario::ServeKind;

/// The archive's path on the server.
pub const ARCHIVE_PATH: &str = "/agy-acp-server-1.3.0.zip";
/// The agent index document's path.
pub const INDEX_PATH: &str = "/registry.json";
/// Where `redirect_loopback` sends the archive request.
const MOVED_PATH: &str = "/moved/agy-acp-server-1.3.0.zip";

struct Served {
    archive: Bytes,
    index: String,
    serve: ServeKind,
    downloads: AtomicUsize,
    index_fetches: AtomicUsize,
    /// The `drop_connection` fault: archive requests still to cut, and where.
    drops_left: AtomicUsize,
    drop_at: AtomicU64,
    stop: CancellationToken,
}

/// A running loopback agent index host.
pub struct AgentIndexServer {
    address: SocketAddr,
    served: Arc<Served>,
    task: tokio::task::JoinHandle<()>,
}

impl AgentIndexServer {
    /// Starts serving; the index document is made from the archive URL by `make_index`.
    pub async fn start(
        archive: Vec<u8>,
        serve: ServeKind,
        make_index: impl FnOnce(&str) -> String,
    ) -> Result<Self, String> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(|e| format!("cannot bind the agent index host: {e}"))?;
        let address = listener
            .local_addr()
            .map_err(|e| format!("cannot read the agent index host's address: {e}"))?;
        let archive_url = format!("http://{address}{ARCHIVE_PATH}");
        let served = Arc::new(Served {
            archive: Bytes::from(archive),
            index: make_index(&archive_url),
            serve,
            downloads: AtomicUsize::new(0),
            index_fetches: AtomicUsize::new(0),
            drops_left: AtomicUsize::new(0),
            drop_at: AtomicU64::new(0),
            stop: CancellationToken::new(),
        });
        let app = Router::new()
            .route(INDEX_PATH, get(index_document))
            .route(ARCHIVE_PATH, get(archive_file))
            .route(MOVED_PATH, get(moved_archive))
            .with_state(served.clone());
        let stop = served.stop.clone();
        let task = tokio::spawn(async move {
            let serving = axum::serve(listener, app).with_graceful_shutdown(stop.cancelled_owned());
            if let Err(error) = serving.await {
                tracing::warn!(%error, "the agent index host stopped");
            }
        });
        Ok(Self {
            address,
            served,
            task,
        })
    }

    /// The agent index document's URL.
    pub fn index_url(&self) -> String {
        format!("http://{}{INDEX_PATH}", self.address)
    }

    /// How many archive requests were answered so far.
    pub fn downloads(&self) -> usize {
        self.served.downloads.load(Ordering::SeqCst)
    }

    /// How many agent index document requests were answered so far.
    pub fn index_fetches(&self) -> usize {
        self.served.index_fetches.load(Ordering::SeqCst)
    }

    /// From now on, the next `requests` archive requests get the Content-Length and the
    /// first `at_byte` bytes of the body, then the connection drops.
    pub fn arm_drop(&self, at_byte: u64, requests: usize) {
        self.served.drop_at.store(at_byte, Ordering::SeqCst);
        self.served.drops_left.store(requests, Ordering::SeqCst);
    }

    /// The agent index document it serves.
    pub fn index_document(&self) -> String {
        self.served.index.clone()
    }

    /// Stops serving (a stalled body ends) and waits for the server task.
    pub async fn stop(self) {
        self.served.stop.cancel();
        if tokio::time::timeout(std::time::Duration::from_secs(5), self.task)
            .await
            .is_err()
        {
            tracing::warn!("the agent index host did not stop in time");
        }
    }
}

async fn index_document(State(served): State<Arc<Served>>) -> Response {
    served.index_fetches.fetch_add(1, Ordering::SeqCst);
    (
        [(header::CONTENT_TYPE, "application/json")],
        served.index.clone(),
    )
        .into_response()
}

async fn archive_file(State(served): State<Arc<Served>>) -> Response {
    let count = served.downloads.fetch_add(1, Ordering::SeqCst) + 1;
    let whole = served.archive.clone();
    let half = whole.slice(..whole.len() / 2);
    let length = whole.len().to_string();
    let dropping = served
        .drops_left
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok();
    if dropping {
        let at = usize::try_from(served.drop_at.load(Ordering::SeqCst)).unwrap_or(usize::MAX);
        if at < whole.len() {
            return cut_body(whole.slice(..at), length);
        }
        return whole.into_response();
    }
    match served.serve {
        ServeKind::Ok => whole.into_response(),
        ServeKind::Flaky if count > 1 => whole.into_response(),
        ServeKind::Flaky => StatusCode::SERVICE_UNAVAILABLE.into_response(),
        ServeKind::NotFound => StatusCode::NOT_FOUND.into_response(),
        ServeKind::RedirectLoopback => redirect(MOVED_PATH),
        ServeKind::RedirectInsecure => {
            redirect("http://archive.example.invalid/agy-acp-server-1.3.0.zip")
        }
        ServeKind::Stall => {
            let stop = served.stop.clone();
            let body = futures::stream::iter([Ok::<_, std::io::Error>(half)]).chain(
                futures::stream::once(async move {
                    stop.cancelled().await;
                    Err(std::io::Error::other("the agent index host stopped"))
                }),
            );
            Response::builder()
                .header(header::CONTENT_LENGTH, length)
                .body(Body::from_stream(body))
                .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
        }
        ServeKind::Truncated => cut_body(half, length),
    }
}

/// `sent` under the whole archive's Content-Length, then a broken connection. The cut
/// comes after a yield, so the headers and `sent` are flushed to the socket first.
fn cut_body(sent: Bytes, length: String) -> Response {
    let body = futures::stream::iter([Ok::<_, std::io::Error>(sent)]).chain(futures::stream::once(
        async {
            tokio::task::yield_now().await;
            Err(std::io::Error::other("cut"))
        },
    ));
    Response::builder()
        .header(header::CONTENT_LENGTH, length)
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// The archive behind `redirect_loopback`'s 302.
async fn moved_archive(State(served): State<Arc<Served>>) -> Response {
    served.archive.clone().into_response()
}

fn redirect(location: &str) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, location.to_owned())]).into_response()
}

use futures::StreamExt;
