//! `AntigravityProvider`: the `LlmAdapter` DSH talks to. Each generate either continues
//! the pending tool exchange its history answers, or starts a fresh turn from the complete
//! history: a tool turn takes an active-turn slot and a process of its own (an idle one
//! from the pool, or a new one) with its own bridge; a request without tools (chat,
//! title, compaction) takes no slot and waits its turn in the serialized no-tool lane
//! (C42). The provider owns every turn task, the pool, the lane's persistent client and
//! the discovery of the server's model catalogue, and awaits all of them on disposal.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use tokio::sync::Semaphore;
use tokio::sync::mpsc::error::TrySendError;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::bridge::ToolCatalog;
use crate::config::{ADAPTER_ID, AdapterConfig, SERVER_DEFAULT_MODEL};
use crate::contract::{GenerateRequest, LlmAdapter, LlmError, ModelInfo, PartSender, PartStream};
use crate::discovery::discover;
use crate::error::AdapterError;
use crate::pool::ProcessPool;
use crate::server::ServerLauncher;
use crate::turn::{
    Claim, Continuation, ExchangeRegistry, HistoryDigest, NoToolLane, TurnSpec, build_prompt,
    fingerprint, run_turn,
};

/// DSH's adapter over the Antigravity ACP server.
#[derive(Debug)]
pub struct AntigravityProvider {
    config: Arc<AdapterConfig>,
    launcher: Arc<ServerLauncher>,
    registry: Arc<ExchangeRegistry>,
    tasks: TaskTracker,
    root: CancellationToken,
    active_turns: Arc<Semaphore>,
    next_turn: AtomicU64,
    pool: Arc<ProcessPool>,
    /// Requests without tools, one at a time; holds the persistent client (C42).
    lane: NoToolLane,
    /// The server's catalogue, once discovered (model ids without the prefix).
    discovered: Mutex<Option<Vec<String>>>,
}

impl AntigravityProvider {
    /// A provider that launches servers as `config` says.
    pub fn new(config: AdapterConfig) -> Self {
        let active_turns = Arc::new(Semaphore::new(config.max_active_turns));
        let root = CancellationToken::new();
        Self {
            launcher: Arc::new(ServerLauncher::new(&config)),
            pool: ProcessPool::new(&config, root.clone()),
            config: Arc::new(config),
            registry: Arc::default(),
            tasks: TaskTracker::new(),
            root,
            active_turns,
            next_turn: AtomicU64::new(1),
            lane: NoToolLane::default(),
            discovered: Mutex::new(None),
        }
    }

    /// The server model a DSH model id selects: `None` for the server's default.
    fn server_model(model: &str) -> Result<Option<String>, AdapterError> {
        match model
            .strip_prefix(ADAPTER_ID)
            .and_then(|m| m.strip_prefix('/'))
        {
            Some(SERVER_DEFAULT_MODEL) => Ok(None),
            Some(model) if !model.is_empty() => Ok(Some(model.to_owned())),
            _ => Err(AdapterError::ModelUnavailable(model.to_owned())),
        }
    }

    fn start(&self, request: GenerateRequest) -> Result<PartStream, AdapterError> {
        if self.root.is_cancelled() {
            return Err(AdapterError::Disposed);
        }
        let unsupported = request.sampling.set_controls();
        if !unsupported.is_empty() {
            return Err(AdapterError::UnsupportedOption(unsupported.join(", ")));
        }
        let model = Self::server_model(&request.model)?;
        let fingerprint = fingerprint(&request);
        let (sink, stream) = PartStream::channel();
        let sink = match self.registry.claim(&request, &fingerprint)? {
            Claim::Continue(exchange, results) => {
                let continuation = Continuation {
                    results,
                    sink,
                    abort: request.abort.clone(),
                    history: HistoryDigest::of(&request.history),
                };
                match exchange.control.try_send(continuation) {
                    Ok(()) => return Ok(stream),
                    // The turn ended just as it was claimed: start afresh from the
                    // complete history, which holds the calls and their results.
                    Err(TrySendError::Closed(c) | TrySendError::Full(c)) => c.sink,
                }
            }
            Claim::Fresh => sink,
        };
        self.start_fresh(request, model, fingerprint, sink)?;
        Ok(stream)
    }

    fn start_fresh(
        &self,
        request: GenerateRequest,
        model: Option<String>,
        fingerprint: [u8; 32],
        sink: PartSender,
    ) -> Result<(), AdapterError> {
        let catalog = if request.tools.is_empty() {
            None
        } else {
            Some(Arc::new(ToolCatalog::build(&request.tools)?))
        };
        let prompt = build_prompt(&request, catalog.as_deref())?;
        // Only tool turns count against the active-turn limit (C41); requests without
        // tools wait in their lane instead, and never fail `busy` (C42).
        let (permit, lane) = match &catalog {
            Some(_) => {
                let permit = self
                    .active_turns
                    .clone()
                    .try_acquire_owned()
                    .map_err(|_| AdapterError::Busy(self.config.max_active_turns))?;
                (Some(permit), None)
            }
            None => (None, Some(self.lane.clone())),
        };
        let spec = TurnSpec {
            config: self.config.clone(),
            launcher: self.launcher.clone(),
            pool: self.pool.clone(),
            lane,
            model,
            prompt,
            catalog,
            fingerprint,
            history: HistoryDigest::of(&request.history),
            sink,
            abort: request.abort,
            provider: self.root.clone(),
            registry: self.registry.clone(),
            id: self.next_turn.fetch_add(1, Ordering::Relaxed),
            permit,
        };
        self.tasks.spawn(run_turn(spec));
        Ok(())
    }
}

impl LlmAdapter for AntigravityProvider {
    fn id(&self) -> &str {
        ADAPTER_ID
    }

    fn models(&self) -> Vec<ModelInfo> {
        let discovered = match self.discovered.lock() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        let listed = discovered.unwrap_or_else(|| self.config.models.clone());
        std::iter::once(SERVER_DEFAULT_MODEL)
            .chain(listed.iter().map(String::as_str))
            .map(|m| ModelInfo {
                id: format!("{ADAPTER_ID}/{m}"),
                display_name: m.to_owned(),
            })
            .collect()
    }

    fn discover_models(&self) -> BoxFuture<'_, Result<Vec<ModelInfo>, LlmError>> {
        Box::pin(async move {
            if self.root.is_cancelled() {
                return Err(AdapterError::Disposed.to_llm_error());
            }
            let found = discover(&self.config, &self.launcher, &self.pool, &self.root)
                .await
                .map_err(|error| error.to_llm_error())?;
            match self.discovered.lock() {
                Ok(mut guard) => *guard = Some(found),
                Err(poisoned) => *poisoned.into_inner() = Some(found),
            }
            Ok(self.models())
        })
    }

    fn generate(&self, request: GenerateRequest) -> PartStream {
        self.start(request)
            .unwrap_or_else(|error| PartStream::failed(error.to_llm_error()))
    }

    fn dispose(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.root.cancel();
            self.tasks.close();
            self.tasks.wait().await;
            // Every turn has ended: its process went back or was disposed. The lane's
            // persistent client and the pool go last (C43).
            if let Some(client) = self.lane.lock().await.take() {
                self.pool.dispose_later(client);
            }
            self.pool.shutdown().await;
        })
    }
}

impl Drop for AntigravityProvider {
    fn drop(&mut self) {
        // Turns that outlive a provider dropped without `dispose` still tear down.
        self.root.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DSH model id selects a server model only with a non-empty id after
    /// `antigravity-acp/`; `server-default` selects the server's default.
    #[test]
    fn model_ids_map_to_server_models() {
        let model = AntigravityProvider::server_model;
        assert!(matches!(model("antigravity-acp/server-default"), Ok(None)));
        assert!(
            matches!(model("antigravity-acp/gemini-3-pro"), Ok(Some(m)) if m == "gemini-3-pro")
        );
        for refused in [
            "antigravity-acp/",
            "antigravity-acp",
            "gemini-3-pro",
            "other/gemini-3-pro",
        ] {
            assert!(
                matches!(model(refused), Err(AdapterError::ModelUnavailable(_))),
                "{refused:?} was accepted"
            );
        }
    }
}
