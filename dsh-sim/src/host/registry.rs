//! DSH's adapter registry in miniature, as `ctx.llm.registerAdapter(providers, adapter)`
//! keeps it: provider routes, each served by one adapter (a taken route is
//! `DUPLICATE_ADAPTER`; an adapter whose `providerInfo` describes another route is
//! `INVALID_ADAPTER`); the bundle's default model for fresh chats (C02: the
//! `agent-default-model` row of DSH's bundle patch, `antigravity-acp/server-default`); and
//! DSH's model precedence, where a chat's saved choice wins over that default (C03).
//! Models are written `provider/model`, as DSH's settings and UI name them.

use std::sync::Arc;

use antigravity_acp::contract::{AdapterRegistry, LlmAdapter, RegistryError};

/// The bundle's default model for fresh chats: provider `antigravity-acp`, model
/// `server-default` (the row `dsh-plugin/cordis.patch.yml` writes for DSH).
pub const BUNDLE_DEFAULT_MODEL: (&str, &str) = (
    antigravity_acp::ADAPTER_ID,
    antigravity_acp::SERVER_DEFAULT_MODEL,
);

/// Why the host could not pick an adapter or a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// A fresh chat needs a default model, but the bundle set none.
    #[error("the bundle names no default model, so a fresh chat has no model")]
    NoDefaultModel,
    /// A model id does not have the `<provider>/<model>` shape.
    #[error("model `{0}` is not of the form `<provider>/<model>`")]
    MalformedModelId(String),
    /// No registered adapter serves the model's provider (DSH's `NO_ADAPTER`).
    #[error("NO_ADAPTER: no registered adapter serves provider `{0}`")]
    NoAdapter(String),
}

/// One registration: its routes and the adapter serving them.
struct Mounted {
    providers: Vec<String>,
    adapter: Arc<dyn LlmAdapter>,
}

/// The host's registry of LLM adapters.
#[derive(Default)]
pub struct HostRegistry {
    mounted: Vec<Mounted>,
    default_model: Option<(String, String)>,
}

impl std::fmt::Debug for HostRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostRegistry")
            .field("providers", &self.providers())
            .field("default_model", &self.default_model)
            .finish()
    }
}

impl HostRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every registered provider route, in registration order (`listProviders`).
    pub fn providers(&self) -> Vec<String> {
        self.mounted
            .iter()
            .flat_map(|m| m.providers.iter().cloned())
            .collect()
    }

    /// Applies the bundle's `agent-default-model` row: fresh chats get `provider/model`.
    pub fn set_default_model(&mut self, provider: &str, model: &str) {
        self.default_model = Some((provider.to_owned(), model.to_owned()));
    }

    /// The model fresh chats get (C02), as `provider/model`.
    pub fn default_model(&self) -> Result<String, HostError> {
        self.default_model
            .as_ref()
            .map(|(provider, model)| format!("{provider}/{model}"))
            .ok_or(HostError::NoDefaultModel)
    }

    /// DSH's precedence: a chat's saved model choice wins; a fresh chat gets the
    /// bundle's default model (C02, C03).
    pub fn model_for_chat(&self, saved_choice: Option<&str>) -> Result<String, HostError> {
        match saved_choice {
            Some(saved) => Ok(saved.to_owned()),
            None => self.default_model(),
        }
    }

    /// The adapter serving the provider of `model` (`provider/model`).
    pub fn adapter_for_model(&self, model: &str) -> Result<Arc<dyn LlmAdapter>, HostError> {
        let (provider, _) = split_model(model)?;
        self.adapter_for_provider(provider)
    }

    /// The adapter serving `provider`.
    pub fn adapter_for_provider(&self, provider: &str) -> Result<Arc<dyn LlmAdapter>, HostError> {
        self.mounted
            .iter()
            .find(|m| m.providers.iter().any(|p| p == provider))
            .map(|m| m.adapter.clone())
            .ok_or_else(|| HostError::NoAdapter(provider.to_owned()))
    }

    /// Every registered adapter, for disposal.
    pub fn adapters(&self) -> Vec<Arc<dyn LlmAdapter>> {
        self.mounted.iter().map(|m| m.adapter.clone()).collect()
    }
}

/// `provider/model` split at its first `/`; both halves non-empty.
pub fn split_model(model: &str) -> Result<(&str, &str), HostError> {
    model
        .split_once('/')
        .filter(|(provider, rest)| !provider.is_empty() && !rest.is_empty())
        .ok_or_else(|| HostError::MalformedModelId(model.to_owned()))
}

impl AdapterRegistry for HostRegistry {
    fn register_adapter(
        &mut self,
        providers: &[String],
        adapter: Arc<dyn LlmAdapter>,
    ) -> Result<(), RegistryError> {
        if providers.is_empty() {
            return Err(RegistryError::NoProviders);
        }
        let taken = self.providers();
        if let Some(provider) = providers.iter().find(|p| taken.contains(p)) {
            return Err(RegistryError::DuplicateAdapter(provider.clone()));
        }
        // DSH reads each route's providerInfo on registration and refuses an adapter
        // that describes another route.
        for provider in providers {
            let info = adapter.provider_info(provider);
            if info.id != *provider || info.name.trim().is_empty() {
                return Err(RegistryError::InvalidAdapter(provider.clone()));
            }
        }
        self.mounted.push(Mounted {
            providers: providers.to_vec(),
            adapter,
        });
        Ok(())
    }
}
