//! The host's adapter registry, as DSH's `ctx.llm.registerAdapter` offers it to plugins.

use std::sync::Arc;

use super::LlmAdapter;

/// How a plugin asks to be mounted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterRegistration {
    /// Mount as DSH's primary adapter.
    pub primary: bool,
    /// The model that fresh chats get when this adapter is primary (`<id>/<model>`).
    pub default_model: String,
}

/// Why the host refused a registration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// An adapter with this id is already registered.
    #[error("an adapter with id `{0}` is already registered")]
    DuplicateId(String),
    /// The default model does not belong to the adapter.
    #[error("default model `{model}` is not offered by adapter `{adapter}`")]
    UnknownDefaultModel {
        /// The adapter's id.
        adapter: String,
        /// The model it named.
        model: String,
    },
}

/// The host side of plugin registration. DSH (here: `dsh-sim`) implements it.
pub trait AdapterRegistry {
    /// Adds an adapter to the host.
    fn register_adapter(
        &mut self,
        adapter: Arc<dyn LlmAdapter>,
        registration: AdapterRegistration,
    ) -> Result<(), RegistryError>;
}
