//! `Provider`: one [`AntigravityProvider`] for one plugin scope, built from the plugin's
//! `Config` as JSON (`PluginConfig::from_json(..)?.into_adapter_config()`). Its methods are
//! `LlmAdapter`'s, with DSH's values as JSON text; `dispose` resolves once every process,
//! port and scratch directory the provider owned is gone. An optional `log` function
//! receives the lines of an install a turn starts (the adapter's
//! `install_progress::log_sink`: steps, and a progress line every few seconds), which the
//! plugin hands to DSH's logger.

use std::collections::HashMap;
use std::sync::Arc;

use antigravity_acp::contract::{GenerateOptions, LlmAdapter, ResolvedImage};
use antigravity_acp::user_commands::install_progress;
use antigravity_acp::{AdapterConfig, AntigravityProvider, PluginConfig};
use futures::FutureExt;
use napi::Status;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use tokio_util::sync::CancellationToken;

use crate::failure::{
    INVALID_CONFIG, Result, envelope, from_json, from_llm_error, guard, thrown, to_json,
};
use crate::stream::ChunkStreamHandle;

/// The JS `log(line)` function, callable from any thread; weak (it never keeps Node's event
/// loop alive), and called with the line alone (no error first).
pub type LogFunction = ThreadsafeFunction<String, (), String, Status, false, true>;

/// DSH's adapter over the Antigravity ACP server (the JS class `Provider`).
#[napi]
pub struct Provider {
    inner: Arc<AntigravityProvider>,
}

/// The adapter's configuration from the plugin's `Config` as JSON: the one path every
/// config takes (the plugin's and the `antigravity-acp-dsh` binary's). A refused config
/// throws `ACP_INVALID_CONFIG`, the message naming the field.
pub(crate) fn read_config(config_json: &str) -> Result<AdapterConfig> {
    #[cfg_attr(not(feature = "test-hooks"), allow(unused_mut))]
    let mut config = PluginConfig::from_json(config_json)
        .and_then(PluginConfig::into_adapter_config)
        .map_err(|error| thrown(INVALID_CONFIG, error.to_string()))?;
    #[cfg(feature = "test-hooks")]
    crate::test_overrides::apply(&mut config)?;
    Ok(config)
}

/// A request read from JS: the options (without `signal`) and the image bytes the glue
/// resolved through DSH's attachment store, by attachment id.
pub(crate) fn read_request(
    options_json: &str,
    images_json: Option<&str>,
    signal: CancellationToken,
) -> Result<GenerateOptions> {
    let mut options: GenerateOptions = from_json("the request", options_json)?;
    if let Some(images) = images_json {
        options.images = from_json::<HashMap<String, ResolvedImage>>("the images", images)?;
    }
    options.signal = signal;
    Ok(options)
}

#[cfg(feature = "bench")]
impl Provider {
    /// The adapter this provider wraps (for the bench-only drain).
    pub(crate) fn adapter(&self) -> Arc<AntigravityProvider> {
        self.inner.clone()
    }
}

#[napi]
impl Provider {
    /// A provider configured by the plugin's `Config`, as JSON. A refused config throws
    /// `ACP_INVALID_CONFIG`, the message naming the field. Starts nothing. `log`, when
    /// given, is called with each line of an install a turn starts; it never keeps Node's
    /// event loop alive.
    #[napi(constructor)]
    pub fn new(config_json: String, log: Option<LogFunction>) -> Result<Self> {
        guard(|| {
            let mut config = read_config(&config_json)?;
            if let Some(log) = log {
                let sink = install_progress::log_sink(move |line| {
                    // Queued for JS's thread (the lines are throttled): never blocks the installer.
                    let _status = log.call(line, ThreadsafeFunctionCallMode::NonBlocking);
                });
                install_progress::attach(&mut config, sink);
            }
            Ok(Self {
                inner: Arc::new(AntigravityProvider::new(config)),
            })
        })
    }

    /// `providerInfo(provider)`: `{id, name}` as JSON.
    #[napi]
    pub fn provider_info(&self, provider: String) -> Result<String> {
        guard(|| to_json(&self.inner.provider_info(&provider)))
    }

    /// `providerRetryPolicy(provider)`: DSH's `NormalRetryPolicyConfig` as JSON, or `null`
    /// for DSH's defaults. The glue passes it through `resolveRetryPolicy`.
    #[napi]
    pub fn provider_retry_policy(&self, provider: String) -> Result<String> {
        guard(|| to_json(&self.inner.provider_retry_policy(&provider)))
    }

    /// `listModels(provider)`: `LlmModelInfo[]` in the envelope (`failure`). The first call
    /// runs discovery.
    #[napi]
    pub async fn list_models(&self, provider: String) -> napi::Result<String> {
        let inner = self.inner.clone();
        envelope(async move {
            let models = inner
                .list_models(&provider)
                .await
                .map_err(|e| from_llm_error(&e))?;
            to_json(&models)
        })
        .await
    }

    /// `resolveModel(provider, model)`: `LlmResolvedModelInfo` in the envelope. Answers
    /// from what is known; starts no process.
    #[napi]
    pub async fn resolve_model(&self, provider: String, model: String) -> napi::Result<String> {
        resolved(self.inner.clone(), provider, model).await
    }

    /// `resolveModelNow(provider, model)`: `resolveModel`'s answer, in the envelope, when it
    /// is ready without waiting (the adapter answers from what it knows, so today it always
    /// is); `null` when it would wait, and the caller awaits `resolveModel`. DSH resolves
    /// the model before every stream: this spares each stream a trip through the event
    /// loop.
    #[napi]
    pub fn resolve_model_now(&self, provider: String, model: String) -> Option<String> {
        resolved(self.inner.clone(), provider, model)
            .now_or_never()
            .and_then(napi::Result::ok)
    }

    /// `stream(options)`: starts one generation. `optionsJson` is DSH's `GenerateOptions`
    /// without `signal`; `imagesJson` maps each image block's attachment id to
    /// `{mediaType, dataBase64}`. Every outcome of the generation, a refusal included,
    /// arrives through the handle; only a request that is not DSH's shape throws
    /// (`ACP_INVALID_REQUEST`).
    #[napi]
    pub fn stream(
        &self,
        options_json: String,
        images_json: Option<String>,
    ) -> Result<ChunkStreamHandle> {
        guard(|| {
            let signal = CancellationToken::new();
            let options = read_request(&options_json, images_json.as_deref(), signal.clone())?;
            // The adapter spawns the turn's tasks: on napi's runtime.
            let stream =
                napi::bindgen_prelude::within_runtime_if_available(|| self.inner.stream(options));
            Ok(ChunkStreamHandle::new(stream, signal))
        })
    }

    /// Tears down everything the provider owns: running turns, parked calls, processes,
    /// scratch directories. Resolves (to the envelope of `null`) once all of it is gone.
    #[napi]
    pub async fn dispose(&self) -> napi::Result<String> {
        let inner = self.inner.clone();
        envelope(async move {
            inner.dispose().await;
            Ok("null".to_owned())
        })
        .await
    }
}

/// `LlmResolvedModelInfo` of `model`, in the envelope.
async fn resolved(
    inner: Arc<AntigravityProvider>,
    provider: String,
    model: String,
) -> napi::Result<String> {
    envelope(async move {
        let resolved = inner
            .resolve_model(&provider, &model, CancellationToken::new())
            .await
            .map_err(|e| from_llm_error(&e))?;
        to_json(&resolved)
    })
    .await
}
