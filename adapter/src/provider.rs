//! `AntigravityProvider`: the `LlmAdapter` DSH talks to. Each `stream` either continues
//! the pending tool exchange its history answers, or starts a fresh turn from the complete
//! history: a tool turn takes an active-turn slot and a process of its own (an idle one
//! from the pool, or a new one) with its own bridge; a request without tools (chat,
//! title, compaction) takes no slot and waits its turn in the serialized no-tool lane
//! (C42). The provider owns every turn task, the pool, the lane's persistent client and
//! the discovery of the server's model catalogue, and awaits all of them on disposal.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;
use tokio::sync::Semaphore;
use tokio::sync::mpsc::error::TrySendError;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::acp::CatalogueModel;
use crate::bridge::{CatalogCache, OfferedTools};
use crate::config::{AdapterConfig, SERVER_DEFAULT_MODEL};
use crate::contract::{
    ChunkSender, ChunkStream, FinishReason, GenerateOptions, LlmAdapter, LlmError, LlmModelContext,
    LlmModelInfo, LlmProviderInfo, LlmResolvedModelInfo, ModelModality, RetryPolicy,
};
use crate::discovery::discover;
use crate::error::AdapterError;
use crate::pool::ProcessPool;
use crate::server::ServerLauncher;
use crate::turn::{
    Claim, ContextWindows, Continuation, ExchangeRegistry, LanePlace, NoToolLane, SegmentHistory,
    TurnSpec, WindowReport, build_prompt, fingerprint, run_turn,
};

/// The codes DSH's retry plugin may retry for this provider: only a failure whose
/// generation by construction streamed nothing (C51). An empty response is the one: a
/// retry rebuilds the prompt from DSH's history, which holds every call that ran and its
/// result, so nothing streamed is repeated and no tool is re-run behind DSH's back.
pub const RETRYABLE_CODES: [&str; 1] = ["EMPTY_RESPONSE"];

/// How often DSH's retry plugin may retry an empty response.
const MAX_RETRIES: u32 = 2;

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
    /// The server's catalogue, once discovered; held while discovery runs, so
    /// concurrent `listModels` calls run it once.
    discovered: tokio::sync::Mutex<Option<Vec<CatalogueModel>>>,
    /// The context window each model reported (`usage_update`).
    windows: Arc<ContextWindows>,
    /// The tool catalogues built lately, shared by the turns that offer the same tools.
    catalogs: CatalogCache,
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
            discovered: tokio::sync::Mutex::new(None),
            windows: Arc::default(),
            catalogs: CatalogCache::default(),
        }
    }

    /// How many adapter tasks are still alive: [`crate::diagnostics::live_tasks`], the
    /// process's count (zero once every provider was disposed).
    pub fn live_tasks(&self) -> usize {
        crate::diagnostics::live_tasks()
    }

    /// The server model a DSH model id selects: `None` for the server's default.
    fn server_model(model: &str) -> Result<Option<String>, AdapterError> {
        match model {
            SERVER_DEFAULT_MODEL => Ok(None),
            "" => Err(AdapterError::ModelUnavailable(model.to_owned())),
            model => Ok(Some(model.to_owned())),
        }
    }

    fn start(&self, mut request: GenerateOptions) -> Result<ChunkStream, AdapterError> {
        if self.root.is_cancelled() {
            return Err(AdapterError::Disposed);
        }
        let unsupported = request.unsupported_controls();
        if !unsupported.is_empty() {
            return Err(AdapterError::UnsupportedOption(unsupported.join(", ")));
        }
        let model = Self::server_model(&request.model)?;
        let offered = self.catalogs.offer(request.tools());
        let fingerprint = fingerprint(&request, offered.as_ref().ok().map(|o| &o.digest));
        let (sink, stream) = ChunkStream::channel();
        let sink = match self.registry.claim(&request, &fingerprint)? {
            Claim::Continue(exchange, results) => {
                let continuation = Continuation {
                    results,
                    sink,
                    abort: request.signal.clone(),
                    history: SegmentHistory::new(std::mem::take(&mut request.messages)),
                    max_tokens: request.max_tokens,
                };
                match exchange.control.try_send(continuation) {
                    Ok(()) => return Ok(stream),
                    // The turn ended just as it was claimed: start afresh from the
                    // complete history, which holds the calls and their results.
                    Err(TrySendError::Closed(c) | TrySendError::Full(c)) => {
                        request.messages = c.history.into_messages();
                        c.sink
                    }
                }
            }
            Claim::Fresh => sink,
        };
        self.start_fresh(request, model, fingerprint, sink, offered?)?;
        Ok(stream)
    }

    fn start_fresh(
        &self,
        request: GenerateOptions,
        model: Option<String>,
        fingerprint: [u8; 32],
        sink: ChunkSender,
        offered: OfferedTools,
    ) -> Result<(), AdapterError> {
        let catalog = offered.catalog;
        let prompt = build_prompt(&request, catalog.as_deref())?;
        // Only tool turns count against the active-turn limit (C41); requests without
        // tools wait in their lane instead, and never fail busy (C42).
        let (permit, lane) = match &catalog {
            Some(_) => {
                let permit = self
                    .active_turns
                    .clone()
                    .try_acquire_owned()
                    .map_err(|_| AdapterError::Busy(self.config.max_active_turns))?;
                (Some(permit), None)
            }
            // The request's place in the lane is taken now, in the order DSH made it.
            None => (None, Some(LanePlace::take(&self.lane))),
        };
        let spec = TurnSpec {
            config: self.config.clone(),
            launcher: self.launcher.clone(),
            pool: self.pool.clone(),
            lane,
            window: WindowReport {
                windows: self.windows.clone(),
                model: request.model.clone(),
            },
            max_tokens: request.max_tokens,
            model,
            prompt,
            catalog,
            fingerprint,
            history: SegmentHistory::new(request.messages),
            sink,
            abort: request.signal,
            provider: self.root.clone(),
            registry: self.registry.clone(),
            id: self.next_turn.fetch_add(1, Ordering::Relaxed),
            permit,
        };
        self.tasks
            .spawn(crate::diagnostics::counted(run_turn(spec)));
        Ok(())
    }

    /// `server-default` first, then the server's catalogue (or, before discovery, the
    /// configured models).
    fn model_list(
        &self,
        provider: &str,
        discovered: Option<&[CatalogueModel]>,
    ) -> Vec<LlmModelInfo> {
        let default = self.model_info(provider, SERVER_DEFAULT_MODEL, discovered);
        let listed: Vec<LlmModelInfo> = match discovered {
            Some(found) => found
                .iter()
                .map(|m| self.model_info(provider, &m.id, discovered))
                .collect(),
            None => self
                .config
                .models
                .iter()
                .map(|m| self.model_info(provider, m, None))
                .collect(),
        };
        std::iter::once(default).chain(listed).collect()
    }

    fn model_info(
        &self,
        provider: &str,
        model: &str,
        discovered: Option<&[CatalogueModel]>,
    ) -> LlmModelInfo {
        let known = discovered.into_iter().flatten().find(|m| m.id == model);
        let (name, description) = match (model, known) {
            (SERVER_DEFAULT_MODEL, _) => (
                "Server default".to_owned(),
                Some("Whatever model the Antigravity server selects by itself".to_owned()),
            ),
            (_, Some(known)) => (known.name.clone(), known.description.clone()),
            (model, None) => (model.to_owned(), None),
        };
        LlmModelInfo {
            provider: provider.to_owned(),
            id: model.to_owned(),
            name,
            description,
            input_modalities: Some(vec![ModelModality::Text, ModelModality::Image]),
        }
    }
}

impl LlmAdapter for AntigravityProvider {
    fn provider_info(&self, provider: &str) -> LlmProviderInfo {
        LlmProviderInfo {
            id: provider.to_owned(),
            name: "Google Antigravity (ACP)".to_owned(),
        }
    }

    fn provider_retry_policy(&self, _provider: &str) -> Option<RetryPolicy> {
        Some(RetryPolicy {
            mode: "normal".to_owned(),
            max_retries: MAX_RETRIES,
            retryable_codes: RETRYABLE_CODES.iter().map(|c| (*c).to_owned()).collect(),
        })
    }

    fn list_models(&self, provider: &str) -> BoxFuture<'_, Result<Vec<LlmModelInfo>, LlmError>> {
        let provider = provider.to_owned();
        Box::pin(async move {
            if self.root.is_cancelled() {
                return Err(AdapterError::Disposed.to_llm_error());
            }
            // The first call runs discovery; later calls answer from its result. A
            // failed discovery caches nothing, so the next call tries again.
            let mut discovered = self.discovered.lock().await;
            if discovered.is_none() {
                let found = discover(&self.config, &self.launcher, &self.pool, &self.root)
                    .await
                    .map_err(|error| error.to_llm_error())?;
                *discovered = Some(found);
            }
            Ok(self.model_list(&provider, discovered.as_deref()))
        })
    }

    fn resolve_model(
        &self,
        provider: &str,
        model: &str,
        _signal: CancellationToken,
    ) -> BoxFuture<'_, Result<LlmResolvedModelInfo, LlmError>> {
        let (provider, model) = (provider.to_owned(), model.to_owned());
        // Answers from what is known (no process is started), so it settles at once.
        Box::pin(async move {
            Self::server_model(&model).map_err(|error| error.to_llm_error())?;
            let discovered = self.discovered.try_lock().ok();
            let catalogue = discovered.as_ref().and_then(|d| d.as_deref());
            Ok(LlmResolvedModelInfo {
                model: self.model_info(&provider, &model, catalogue),
                context: self
                    .windows
                    .get(&model)
                    .map(|context_window| LlmModelContext { context_window }),
            })
        })
    }

    fn stream(&self, options: GenerateOptions) -> ChunkStream {
        self.start(options).unwrap_or_else(|error| {
            ChunkStream::finished(FinishReason::Error {
                failure: error.to_llm_error().to_failure(),
            })
        })
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

    /// `server-default` selects the server's default; any other non-empty id is passed
    /// to the server as it is.
    #[test]
    fn model_ids_map_to_server_models() {
        let model = AntigravityProvider::server_model;
        assert!(matches!(model("server-default"), Ok(None)));
        assert!(matches!(model("gemini-3-pro"), Ok(Some(m)) if m == "gemini-3-pro"));
        assert!(matches!(model(""), Err(AdapterError::ModelUnavailable(_))));
    }

    /// `listModels`' answer: `server-default` first, then the configured models until
    /// discovery ran, then the server's catalogue with its own names and descriptions; each
    /// model is the asked provider's, text and image in.
    #[test]
    fn models_are_listed_with_the_servers_own_names() {
        let provider = AntigravityProvider::new(AdapterConfig {
            models: vec!["configured".into()],
            ..AdapterConfig::default()
        });
        let ids = |models: &[LlmModelInfo]| -> Vec<String> {
            models.iter().map(|m| m.id.clone()).collect()
        };
        let before = provider.model_list("agy", None);
        assert_eq!(ids(&before), ["server-default", "configured"]);
        assert_eq!(before[1].name, "configured");
        let catalogue = [
            CatalogueModel {
                id: "gemini-x".into(),
                name: "Gemini X".into(),
                description: Some("fast".into()),
            },
            CatalogueModel {
                id: "gemini-y".into(),
                name: "Gemini Y".into(),
                description: None,
            },
        ];
        let after = provider.model_list("agy", Some(&catalogue));
        assert_eq!(ids(&after), ["server-default", "gemini-x", "gemini-y"]);
        assert_eq!(after[1].name, "Gemini X");
        assert_eq!(after[1].description.as_deref(), Some("fast"));
        assert_eq!(after[2].name, "Gemini Y");
        assert_eq!(after[0].name, "Server default");
        for model in &after {
            assert_eq!(model.provider, "agy");
            assert_eq!(
                model.input_modalities,
                Some(vec![ModelModality::Text, ModelModality::Image])
            );
        }
        let unknown = provider.model_info("agy", "gemini-z", Some(&catalogue));
        assert_eq!(
            (unknown.name.as_str(), unknown.description),
            ("gemini-z", None)
        );
    }

    /// `resolveModel` starts nothing: it answers at once, adds the context window only
    /// once a turn on that model reported one, and refuses an empty model id.
    #[tokio::test]
    async fn resolve_model_answers_from_what_is_known() -> crate::TestResult {
        let provider = AntigravityProvider::new(AdapterConfig::default());
        let signal = CancellationToken::new();
        let before = provider.resolve_model("agy", "m1", signal.clone()).await?;
        assert_eq!((before.model.id.as_str(), before.context), ("m1", None));
        WindowReport {
            windows: provider.windows.clone(),
            model: "m1".into(),
        }
        .record(1_048_576);
        let after = provider.resolve_model("agy", "m1", signal.clone()).await?;
        assert_eq!(
            after.context,
            Some(LlmModelContext {
                context_window: 1_048_576
            })
        );
        let other = provider.resolve_model("agy", "m2", signal.clone()).await?;
        assert_eq!(other.context, None);
        let refused = provider
            .resolve_model("agy", "", signal)
            .await
            .err()
            .ok_or("an empty model id was resolved")?;
        assert_eq!(refused.code, crate::contract::LlmErrorCode::AcpInvalidModel);
        Ok(())
    }

    /// The policy DSH's retry plugin applies retries only an empty response (C51), a
    /// bounded number of times.
    #[test]
    fn only_an_empty_response_is_retryable() {
        let provider = AntigravityProvider::new(AdapterConfig::default());
        let policy = provider.provider_retry_policy("antigravity-acp");
        assert_eq!(
            policy,
            Some(RetryPolicy {
                mode: "normal".into(),
                max_retries: 2,
                retryable_codes: vec!["EMPTY_RESPONSE".into()],
            })
        );
    }
}
