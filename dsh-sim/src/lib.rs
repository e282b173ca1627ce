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
//! - [`discover`]: finding scenario files; [`selection`]: filtering them, and the
//!   record of which failed last time.
//! - [`runner`]: running one scenario end to end (its own runtime, bound, disposal);
//!   [`gemini_home`]: the fresh `GEMINI_HOME` a scenario may ask for.
//! - [`expect`]: judging the DSH-side expectations on the transcript.
//! - [`wire`]: judging `expect.wire` on the fake's journal.
//! - [`provision`]: install scenarios: the served registry and archive, the cache's
//!   starting state, and the judge of the install.
//! - [`bench_install`]: what the installer's checks cost (`dsh-sim bench-install`).
//! - [`install_cli`]: `dsh-sim install` (install, repair or verify the pinned server).
//! - [`client_tap`]: the client-side journal of a run against any server (`dsh-sim tap`).
//! - [`leak`]: the post-disposal leak check (processes, scratch dirs, bridge ports).
//! - [`artifacts`] and [`sequence`]: what a failed scenario leaves behind; [`replay`]:
//!   the replay scenario a failure against a real server leaves.
//! - [`bridge_session`]: the adapter's real MCP bridge on its own (`dsh-sim bridge`).
//! - [`claims`]: the traceability check between claims, CLAIMS.md and scenarios.
//! - [`lint`]: checking scenario files without running them (`dsh-sim lint`).

pub mod artifacts;
pub mod ask;
pub mod bench;
pub mod bench_install;
pub mod bridge_session;
pub mod claims;
pub mod client_tap;
pub mod discover;
pub mod expect;
pub mod gemini_home;
pub mod host;
pub mod install_cli;
pub mod leak;
pub mod lint;
pub mod provision;
pub mod replay;
pub mod run_checks;
pub mod runner;
pub mod scaffold;
pub mod scenario;
pub mod selection;
pub mod sequence;
pub mod wire;
