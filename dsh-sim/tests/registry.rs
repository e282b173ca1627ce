#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The host registry: registering the real adapter for its provider route (C01), the
//! bundle's default model of fresh chats (C02), and a saved choice's precedence (C03).

use std::sync::Arc;

use antigravity_acp::contract::{
    AdapterRegistry, ChunkStream, FinishReason, GenerateOptions, LlmAdapter, LlmError,
    LlmModelInfo, LlmProviderInfo, LlmResolvedModelInfo, RegistryError, RetryPolicy,
};
use antigravity_acp::{AdapterConfig, AntigravityProvider};
use dsh_sim::host::registry::{BUNDLE_DEFAULT_MODEL, HostError, HostRegistry};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

/// The registry as a DSH bundle leaves it: the adapter registered, the bundle's default
/// model applied.
fn mounted() -> HostRegistry {
    let mut registry = HostRegistry::new();
    antigravity_acp::register(&mut registry, AdapterConfig::default()).unwrap();
    registry.set_default_model(BUNDLE_DEFAULT_MODEL.0, BUNDLE_DEFAULT_MODEL.1);
    registry
}

#[test]
fn register_serves_the_configured_provider_route() {
    let registry = mounted();
    assert_eq!(registry.providers(), ["antigravity-acp"]);
    let adapter = registry.adapter_for_provider("antigravity-acp").unwrap();
    assert_eq!(
        adapter.provider_info("antigravity-acp").id,
        "antigravity-acp"
    );
    let mut elsewhere = HostRegistry::new();
    let config = AdapterConfig {
        provider: "agy".into(),
        ..AdapterConfig::default()
    };
    antigravity_acp::register(&mut elsewhere, config).unwrap();
    assert_eq!(elsewhere.providers(), ["agy"]);
    let info = elsewhere
        .adapter_for_provider("agy")
        .unwrap()
        .provider_info("agy");
    assert_eq!(
        info.id, "agy",
        "providerInfo describes the route it was asked about"
    );
}

/// An adapter whose `providerInfo` always names one fixed route.
struct FixedInfo;

impl LlmAdapter for FixedInfo {
    fn provider_info(&self, _provider: &str) -> LlmProviderInfo {
        LlmProviderInfo {
            id: "antigravity-acp".into(),
            name: "fixed".into(),
        }
    }
    fn provider_retry_policy(&self, _provider: &str) -> Option<RetryPolicy> {
        None
    }
    fn list_models(&self, _provider: &str) -> BoxFuture<'_, Result<Vec<LlmModelInfo>, LlmError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn resolve_model(
        &self,
        _provider: &str,
        _model: &str,
        _signal: CancellationToken,
    ) -> BoxFuture<'_, Result<LlmResolvedModelInfo, LlmError>> {
        Box::pin(async {
            Err(LlmError::new(
                antigravity_acp::contract::LlmErrorCode::AcpInternal,
                "x",
            ))
        })
    }
    fn stream(&self, _options: GenerateOptions) -> ChunkStream {
        ChunkStream::finished(FinishReason::Stop)
    }
    fn dispose(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// As DSH does, the host refuses an adapter whose providerInfo describes another route.
#[test]
fn the_host_refuses_an_adapter_describing_another_route() {
    let mut registry = HostRegistry::new();
    assert_eq!(
        registry.register_adapter(&["agy".to_owned()], Arc::new(FixedInfo)),
        Err(RegistryError::InvalidAdapter("agy".into()))
    );
    assert!(
        registry
            .register_adapter(&["antigravity-acp".to_owned()], Arc::new(FixedInfo))
            .is_ok()
    );
}

#[test]
fn a_fresh_chat_gets_server_default() {
    let registry = mounted();
    assert_eq!(BUNDLE_DEFAULT_MODEL, ("antigravity-acp", "server-default"));
    assert_eq!(
        registry.model_for_chat(None).unwrap(),
        "antigravity-acp/server-default"
    );
    assert!(
        registry
            .adapter_for_model("antigravity-acp/server-default")
            .is_ok()
    );
}

#[test]
fn a_saved_model_choice_wins_over_the_default() {
    let registry = mounted();
    let saved = "antigravity-acp/gemini-3.8-flash-low";
    assert_eq!(registry.model_for_chat(Some(saved)).unwrap(), saved);
}

#[test]
fn the_host_refuses_a_second_adapter_for_the_same_provider() {
    let mut registry = mounted();
    let again = antigravity_acp::register(&mut registry, AdapterConfig::default());
    assert!(matches!(again, Err(RegistryError::DuplicateAdapter(p)) if p == "antigravity-acp"));
    let adapter: Arc<dyn LlmAdapter> = Arc::new(AntigravityProvider::new(AdapterConfig::default()));
    assert_eq!(
        registry.register_adapter(&[], adapter),
        Err(RegistryError::NoProviders)
    );
}

#[test]
fn without_the_bundle_a_fresh_chat_has_no_model() {
    let mut registry = HostRegistry::new();
    antigravity_acp::register(&mut registry, AdapterConfig::default()).unwrap();
    assert_eq!(
        registry.model_for_chat(None),
        Err(HostError::NoDefaultModel)
    );
}

#[test]
fn models_route_by_their_provider() {
    let registry = mounted();
    assert!(matches!(
        registry.adapter_for_model("other/model"),
        Err(HostError::NoAdapter(_))
    ));
    assert!(matches!(
        registry.adapter_for_model("no-slash"),
        Err(HostError::MalformedModelId(_))
    ));
}
