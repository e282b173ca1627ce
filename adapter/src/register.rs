//! The plugin entry: mounts the adapter as DSH's primary LLM adapter (C01, C02).

use std::sync::Arc;

use crate::config::{AdapterConfig, DEFAULT_MODEL};
use crate::contract::{AdapterRegistration, AdapterRegistry, RegistryError};
use crate::provider::AntigravityProvider;

/// Registers a new provider with the host as its primary adapter, with
/// `antigravity-acp/server-default` as the model of fresh chats.
pub fn register(
    registry: &mut dyn AdapterRegistry,
    config: AdapterConfig,
) -> Result<Arc<AntigravityProvider>, RegistryError> {
    let provider = Arc::new(AntigravityProvider::new(config));
    registry.register_adapter(
        provider.clone(),
        AdapterRegistration {
            primary: true,
            default_model: DEFAULT_MODEL.to_owned(),
        },
    )?;
    Ok(provider)
}
