//! `antigravity-acp`: DSH's primary LLM adapter over Google's official Antigravity ACP
//! server (1.3.0).
//!
//! The adapter launches the server as a managed stdio subprocess, speaks ACP v1 through
//! the official SDK, and lends DSH's tools to it only through a private MCP bridge on
//! loopback. A tool call the server makes becomes an ordinary DSH tool call; DSH runs it
//! (or denies it) and the result flows back to the parked MCP request. The adapter runs
//! no tool itself.
//!
//! Start with [`concepts`]: turn, segment, exchange, claim, continuation, settle and
//! release, the teardown order and a diagram.
//!
//! Map of the crate (each module's doc says what it owns):
//! - [`contract`]: the host contract DSH offers plugins (`LlmAdapter`, requests, streams).
//! - [`register`]: the plugin entry that mounts the adapter as DSH's primary adapter.
//! - [`config`]: the server command, its confinement, bounds and timeouts.
//! - `provider`: the `LlmAdapter` implementation; routes each generate to a new turn or
//!   to the pending exchange it continues.
//! - `turn`: one turn (the process it checked out, its ACP session, bridge and event
//!   loop).
//! - `pool`: the idle server processes kept for reuse, keyed by their launch line.
//! - `discovery`: reads the server's model catalogue; its process joins the pool.
//! - [`install`]: provisioning: installs, verifies and repairs the pinned 1.3.0 build.
//! - [`server`]: the managed subprocess, its scratch directory, its allowlisted
//!   environment and its kernel confinement (Landlock).
//! - `acp`: the ACP client side (handshake, auth retry, model choice, permissions, the
//!   server's built-in tools disabled in every session: [`NATIVE_TOOLS`]).
//! - `bridge`: the private MCP endpoint (HTTP guard, tool catalog, parked calls).
//! - [`StandaloneBridge`]: that endpoint on its own, answering its calls with a callback
//!   (for integrators and `dsh-sim bridge`).
//! - `error`: internal errors and their one mapping to sanitized `LlmError` codes.
//!
//! What may touch the disk or start a process is enforced by clippy (`adapter/clippy.toml`,
//! C04, C15, C31): only the modules marked below may, and test code.

#![cfg_attr(
    test,
    allow(
        clippy::disallowed_methods,
        clippy::disallowed_types,
        reason = "tests make fixtures on disk and start stand-in servers"
    )
)]

mod acp;
mod bridge;
pub mod concepts;
pub mod config;
pub mod contract;
pub mod diagnostics;
mod discovery;
mod error;
#[allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "the installer keeps the one store on disk: the cache of the pinned server build (C04)"
)]
pub mod install;
mod pool;
mod provider;
mod register;
pub mod server;

mod standalone_bridge;
mod turn;
pub mod user_commands;

pub use acp::NATIVE_TOOLS;
pub use config::{
    ADAPTER_ID, AdapterConfig, AgentProfileChoice, AuthMethod, ConfinementMode, PluginConfig,
    PluginConfigError, PluginServer, SERVER_DEFAULT_MODEL, ServerCommand, ServerSource,
};
pub use provider::{AntigravityProvider, RETRYABLE_CODES};
pub use register::register;
pub use standalone_bridge::{BridgeAnswer, BridgeTool, StandaloneBridge};

/// What unit tests return, so they use `?` instead of `unwrap`.
#[cfg(test)]
pub(crate) use test_support::TestResult;
