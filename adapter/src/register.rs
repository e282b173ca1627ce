//! The plugin entry: mounts the adapter as DSH's primary LLM adapter (C01, C02).

use std::sync::Arc;

use crate::config::AdapterConfig;
use crate::contract::{AdapterRegistration, AdapterRegistry, RegistryError};
use crate::provider::AntigravityProvider;

/// The adapter's id, the prefix of its model ids.
pub const ADAPTER_ID: &str = "antigravity-acp";

/// The model that means "whatever the server selects by itself".
pub const SERVER_DEFAULT_MODEL: &str = "server-default";

/// The full DSH id of the server-default model, given to fresh chats.
pub const DEFAULT_MODEL: &str = "antigravity-acp/server-default";

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
