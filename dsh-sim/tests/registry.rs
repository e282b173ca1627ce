#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The host registry: mounting the real adapter as primary (C01), the default model of
//! fresh chats (C02), and a saved choice's precedence (C03).

use std::sync::Arc;

use antigravity_acp::contract::{AdapterRegistration, AdapterRegistry, RegistryError};
use antigravity_acp::{AdapterConfig, AntigravityProvider, DEFAULT_MODEL};
use dsh_sim::host::registry::{HostError, HostRegistry};

fn mounted() -> HostRegistry {
    let mut registry = HostRegistry::new();
    antigravity_acp::register(&mut registry, AdapterConfig::default()).unwrap();
    registry
}

#[test]
fn register_mounts_the_adapter_as_primary() {
    let registry = mounted();
    assert_eq!(registry.adapter_ids(), ["antigravity-acp"]);
    assert_eq!(registry.primary().unwrap().id(), "antigravity-acp");
}

#[test]
fn a_fresh_chat_gets_server_default() {
    let registry = mounted();
    assert_eq!(DEFAULT_MODEL, "antigravity-acp/server-default");
    assert_eq!(registry.default_model(), Ok(DEFAULT_MODEL));
    assert_eq!(registry.model_for_chat(None).unwrap(), DEFAULT_MODEL);
    assert_eq!(
        registry.adapter_for_model(DEFAULT_MODEL).unwrap().id(),
        "antigravity-acp"
    );
}

#[test]
fn a_saved_model_choice_wins_over_the_default() {
    let registry = mounted();
    let saved = "antigravity-acp/gemini-3.8-flash-low";
    assert_eq!(registry.model_for_chat(Some(saved)).unwrap(), saved);
}

#[test]
fn the_host_refuses_a_second_adapter_with_the_same_id() {
    let mut registry = mounted();
    let again = antigravity_acp::register(&mut registry, AdapterConfig::default());
    assert!(matches!(again, Err(RegistryError::DuplicateId(id)) if id == "antigravity-acp"));
}

#[test]
fn the_host_refuses_a_default_model_the_adapter_does_not_offer() {
    let mut registry = HostRegistry::new();
    let refused = registry.register_adapter(
        Arc::new(AntigravityProvider::new(AdapterConfig::default())),
        AdapterRegistration {
            primary: true,
            default_model: "antigravity-acp/nope".into(),
        },
    );
    assert!(matches!(
        refused,
        Err(RegistryError::UnknownDefaultModel { .. })
    ));
    assert_eq!(
        registry.model_for_chat(None),
        Err(HostError::NoPrimaryAdapter)
    );
}

#[test]
fn models_route_by_their_adapter_prefix() {
    let registry = mounted();
    assert!(matches!(
        registry.adapter_for_model("other/model"),
        Err(HostError::UnknownAdapter(_))
    ));
    assert!(matches!(
        registry.adapter_for_model("no-slash"),
        Err(HostError::MalformedModelId(_))
    ));
}
