//! The host's adapter registry, as DSH's `ctx.llm.registerAdapter(providers, adapter)`
//! offers it to plugins. `dsh-sim` implements it; inside DSH the Node binding's plugin
//! calls the real one.

use std::sync::Arc;

use super::LlmAdapter;

/// Why the host refused a registration (DSH's `LlmError` codes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// `DUPLICATE_ADAPTER`: a provider route already has an adapter.
    #[error("DUPLICATE_ADAPTER: provider `{0}` already has an adapter")]
    DuplicateAdapter(String),
    /// An initial registration must name at least one provider route.
    #[error("INVALID_PROVIDER: a registration needs at least one provider route")]
    NoProviders,
    /// `INVALID_ADAPTER`: the adapter's `providerInfo(provider)` does not describe that
    /// route (its id differs, or its name is empty), as DSH checks on registration.
    #[error("INVALID_ADAPTER: the adapter's providerInfo does not describe provider `{0}`")]
    InvalidAdapter(String),
}

/// The host side of plugin registration.
pub trait AdapterRegistry {
    /// Registers `adapter` for every route in `providers`, all or nothing.
    fn register_adapter(
        &mut self,
        providers: &[String],
        adapter: Arc<dyn LlmAdapter>,
    ) -> Result<(), RegistryError>;
}
