//! dsh-sim: DSH in miniature, and the YAML scenario runner that judges the
//! `antigravity-acp` adapter against the scripted fake server (or any ACP server).
//!
//! Map of the crate (each module's doc says what it owns):
//! - [`host`]: DSH in miniature: the adapter registry and model precedence
//!   ([`host::registry`]), the agent loop ([`host::agent_loop`]), the stream rules
//!   ([`host::stream_check`]), DSH's tools and permission policy ([`host::tools`]), the
//!   requests beside a chat ([`host::side_requests`]) and the record of a chat
//!   ([`host::transcript`]).
//! - [`ask`]: one chat turn by hand against any server (`dsh-sim ask`).
//! - [`scenario`]: the YAML scenario format, its strict parser and its JSON Schema.
//! - [`scaffold`]: starting a new scenario (`dsh-sim new`).
//! - [`runner`]: running one scenario end to end (its own runtime, bound, disposal) and
//!   judging it: finding and choosing the files ([`runner::discover`],
//!   [`runner::selection`]), what a run needs ([`runner::gemini_home`],
//!   [`runner::provision`] for install scenarios, [`runner::client_tap`] for the
//!   client-side journal against any server), the judges ([`runner::expect`] on the
//!   transcript, [`runner::wire`] on the journal, the leak checks [`runner::run_checks`]
//!   and [`runner::leak`]), and what a failure leaves ([`runner::artifacts`],
//!   [`runner::sequence`], [`runner::replay`]).
//! - [`bench_install`]: what the installer's checks cost (`dsh-sim bench-install`).
//! - [`install_cli`]: `dsh-sim install` (install, repair or verify the pinned server).
//! - [`bridge_session`]: the adapter's real MCP bridge on its own (`dsh-sim bridge`).
//! - [`claims`]: the traceability check between claims, CLAIMS.md and scenarios.
//! - [`lint`]: checking scenario files without running them (`dsh-sim lint`).

pub mod ask;
pub mod bench;
pub mod bench_install;
pub mod bridge_session;
pub mod claims;
pub mod host;
pub mod install_cli;
pub mod lint;
pub mod runner;
pub mod scaffold;
pub mod scenario;
