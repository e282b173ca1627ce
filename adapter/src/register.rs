//! The plugin entry: registers a provider with the host's adapter registry for the
//! configured provider route (C01), as DSH's `ctx.llm.registerAdapter([provider],
//! adapter)` does. The model of fresh chats (C02) is the bundle's choice, not the
//! registry's: DSH's bundle patch (`dsh-plugin/cordis.patch.yml`) names
//! `antigravity-acp/server-default`, and `dsh-sim`'s bundle does the same.

use std::sync::Arc;

use crate::config::AdapterConfig;
use crate::contract::{AdapterRegistry, RegistryError};
use crate::provider::AntigravityProvider;

/// Registers a new provider for `config.provider`.
pub fn register(
    registry: &mut dyn AdapterRegistry,
    config: AdapterConfig,
) -> Result<Arc<AntigravityProvider>, RegistryError> {
    let providers = [config.provider.clone()];
    let provider = Arc::new(AntigravityProvider::new(config));
    registry.register_adapter(&providers, provider.clone())?;
    Ok(provider)
}
