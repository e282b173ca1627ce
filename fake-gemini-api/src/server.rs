//! [`ModelApi`]: the fake's lifetime — bind a loopback port, serve, shut down.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::error::ModelApiError;
use crate::handler::{Shared, handle};
use crate::journal::{Journal, JournalEntry};
use crate::script::ModelScript;

/// Agents send whole conversations; allow large bodies.
const BODY_LIMIT: usize = 256 * 1024 * 1024;

/// How long shutdown waits for responses and connections before aborting them.
const SHUTDOWN_BOUND: Duration = Duration::from_secs(5);

/// A running fake Gemini API on `127.0.0.1`. Dropping it stops the server (abort);
/// [`ModelApi::shutdown`] stops it and waits for its tasks.
#[derive(Debug)]
pub struct ModelApi {
    url: String,
    shared: Arc<Shared>,
    server: Option<JoinHandle<std::io::Result<()>>>,
}

impl ModelApi {
    /// Checks the script, creates the journal, binds an ephemeral loopback port and serves
    /// on the caller's tokio runtime.
    pub async fn start(script: ModelScript, journal_path: PathBuf) -> Result<Self, ModelApiError> {
        script.check()?;
        let journal = Arc::new(Journal::create(journal_path)?);
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(ModelApiError::Listen)?;
        let address = listener.local_addr().map_err(ModelApiError::Listen)?;
        let shutdown = CancellationToken::new();
        let shared = Arc::new(Shared {
            script,
            journal,
            seq: AtomicU64::new(0),
            tracker: TaskTracker::new(),
            shutdown: shutdown.clone(),
        });
        let router = Router::new()
            .fallback(handle)
            .layer(DefaultBodyLimit::max(BODY_LIMIT))
            .with_state(Arc::clone(&shared));
        let serving =
            axum::serve(listener, router).with_graceful_shutdown(shutdown.cancelled_owned());
        let server = tokio::spawn(async move { serving.await });
        tracing::info!(%address, "fake-gemini-api listening");
        Ok(ModelApi {
            url: format!("http://{address}"),
            shared,
            server: Some(server),
        })
    }

    /// The base URL (`http://127.0.0.1:PORT`, no trailing slash): what
    /// `GOOGLE_GEMINI_BASE_URL` is set to.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// A copy of the journal so far.
    pub fn journal(&self) -> Vec<JournalEntry> {
        self.shared.journal.entries()
    }

    /// Waits (at most `bound`) for a journal entry that satisfies `predicate`.
    pub async fn wait_for_journal(
        &self,
        predicate: impl Fn(&JournalEntry) -> bool,
        bound: Duration,
    ) -> Result<JournalEntry, ModelApiError> {
        tokio::time::timeout(bound, self.shared.journal.wait_for(predicate))
            .await
            .map_err(|_| ModelApiError::JournalWaitTimedOut(bound))
    }

    /// Stops the server: ends held responses, stops accepting, waits (bounded) for the
    /// response tasks and the server task, aborting what is left.
    pub async fn shutdown(mut self) {
        self.shared.shutdown.cancel();
        self.shared.tracker.close();
        if tokio::time::timeout(SHUTDOWN_BOUND, self.shared.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!("response tasks still running after {SHUTDOWN_BOUND:?}");
        }
        if let Some(mut server) = self.server.take() {
            match tokio::time::timeout(SHUTDOWN_BOUND, &mut server).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(error))) => tracing::warn!(%error, "the server ended with an error"),
                Ok(Err(error)) => tracing::warn!(%error, "the server task failed"),
                Err(_) => {
                    server.abort();
                    if let Err(error) = server.await
                        && !error.is_cancelled()
                    {
                        tracing::warn!(%error, "the server task failed");
                    }
                }
            }
        }
    }
}

impl Drop for ModelApi {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
        self.shared.tracker.close();
        if let Some(server) = self.server.take() {
            server.abort();
        }
    }
}
