//! DSH's adapter registry in miniature: which adapters are mounted, which one is
//! primary, the model fresh chats get (C02), and DSH's model precedence, where a chat's
//! saved choice wins over that default (C03).

use std::sync::Arc;

use antigravity_acp::contract::{AdapterRegistration, AdapterRegistry, LlmAdapter, RegistryError};

/// Why the host could not pick an adapter or a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// A fresh chat needs a default model, but no primary adapter is mounted.
    #[error("no primary adapter is registered, so a fresh chat has no model")]
    NoPrimaryAdapter,
    /// A model id does not have the `<adapter id>/<model>` shape.
    #[error("model id `{0}` is not of the form `<adapter>/<model>`")]
    MalformedModelId(String),
    /// No registered adapter has the model's prefix.
    #[error("no registered adapter serves model `{0}`")]
    UnknownAdapter(String),
}

/// A mounted adapter and how it asked to be mounted.
struct Mounted {
    adapter: Arc<dyn LlmAdapter>,
    registration: AdapterRegistration,
}

/// The host's registry of LLM adapters.
#[derive(Default)]
pub struct HostRegistry {
    mounted: Vec<Mounted>,
    primary: Option<usize>,
}

impl std::fmt::Debug for HostRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostRegistry")
            .field("adapters", &self.adapter_ids())
            .field("primary", &self.primary().map(|a| a.id().to_owned()))
            .finish()
    }
}

impl HostRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The ids of the mounted adapters, in registration order.
    pub fn adapter_ids(&self) -> Vec<String> {
        self.mounted
            .iter()
            .map(|m| m.adapter.id().to_owned())
            .collect()
    }

    /// The primary adapter, if one is mounted.
    pub fn primary(&self) -> Option<Arc<dyn LlmAdapter>> {
        self.primary
            .and_then(|i| self.mounted.get(i))
            .map(|m| m.adapter.clone())
    }

    /// The model fresh chats get: the primary adapter's default model (C02).
    pub fn default_model(&self) -> Result<&str, HostError> {
        self.primary
            .and_then(|i| self.mounted.get(i))
            .map(|m| m.registration.default_model.as_str())
            .ok_or(HostError::NoPrimaryAdapter)
    }

    /// DSH's precedence: a chat's saved model choice wins; a fresh chat gets the
    /// default model (C02, C03).
    pub fn model_for_chat(&self, saved_choice: Option<&str>) -> Result<String, HostError> {
        match saved_choice {
            Some(saved) => Ok(saved.to_owned()),
            None => self.default_model().map(str::to_owned),
        }
    }

    /// The adapter that serves `model` (`<adapter id>/<model>`).
    pub fn adapter_for_model(&self, model: &str) -> Result<Arc<dyn LlmAdapter>, HostError> {
        let (prefix, _) = model
            .split_once('/')
            .filter(|(prefix, rest)| !prefix.is_empty() && !rest.is_empty())
            .ok_or_else(|| HostError::MalformedModelId(model.to_owned()))?;
        self.mounted
            .iter()
            .find(|m| m.adapter.id() == prefix)
            .map(|m| m.adapter.clone())
            .ok_or_else(|| HostError::UnknownAdapter(model.to_owned()))
    }

    /// Every mounted adapter, for disposal.
    pub fn adapters(&self) -> Vec<Arc<dyn LlmAdapter>> {
        self.mounted.iter().map(|m| m.adapter.clone()).collect()
    }
}

impl AdapterRegistry for HostRegistry {
    fn register_adapter(
        &mut self,
        adapter: Arc<dyn LlmAdapter>,
        registration: AdapterRegistration,
    ) -> Result<(), RegistryError> {
        let id = adapter.id().to_owned();
        if self.mounted.iter().any(|m| m.adapter.id() == id) {
            return Err(RegistryError::DuplicateId(id));
        }
        if !adapter
            .models()
            .iter()
            .any(|model| model.id == registration.default_model)
        {
            return Err(RegistryError::UnknownDefaultModel {
                adapter: id,
                model: registration.default_model,
            });
        }
        if registration.primary {
            self.primary = Some(self.mounted.len());
        }
        self.mounted.push(Mounted {
            adapter,
            registration,
        });
        Ok(())
    }
}
