//! dsh-sim: DSH in miniature, and the YAML scenario runner that judges the
//! `antigravity-acp` adapter against the scripted fake server (or any ACP server).
//!
//! Map of the crate, room by room (each module's doc says what it owns):
//! - [`host`]: DSH in miniature, the host the adapter is mounted in: the adapter registry
//!   and model precedence ([`host::registry`]), the agent loop ([`host::agent_loop`]),
//!   the stream rules DSH enforces ([`host::stream_check`]), DSH's tools and permission
//!   policy ([`host::tools`]), the requests beside a chat ([`host::side_requests`]) and
//!   the DSH-side record of a chat ([`host::transcript`]).
//! - [`scenario`]: the YAML scenario format, its strict parser and its JSON Schema.
//! - [`runner`]: running one scenario end to end (its own runtime, bound, disposal) and
//!   judging it: finding and choosing the files ([`runner::discover`],
//!   [`runner::selection`]), what a run needs ([`runner::gemini_home`],
//!   [`runner::provision`] for install scenarios, [`runner::client_tap`] for the
//!   client-side journal against any server, `dsh-sim tap`), the judges
//!   ([`runner::judge::expect`] on the transcript, [`runner::judge::wire`] on the journal, the leak
//!   checks [`runner::judge::after_run`] and [`runner::judge::leak`]), and what a failure leaves
//!   ([`runner::artifacts`], [`runner::sequence`], [`runner::replay`]).
//! - [`commands`]: the command line: the clap definitions and each subcommand's glue
//!   ([`commands::dispatch`], the binary's `main`), and the commands with more to them:
//!   [`commands::ask`], [`commands::bench`], [`commands::bench_install`],
//!   [`commands::install_cli`], [`commands::bridge_session`], [`commands::scaffold`]
//!   (`new`), [`commands::lint`] and the claims check it runs ([`commands::claims`]).
//!
//! - [`bench`](mod@bench): `dsh-sim bench`, the adapter's figures as ratios to floors measured in the
//!   same run, and the floors themselves (a bare SDK client and agent, bare rmcp).
//! - [`chaos`]: `dsh-sim chaos`, seeded fault injection: the fault catalogue, the plan of
//!   each run, the invariants every run is judged by and what watches them.
//!
//! The rooms depend one way: `commands` on `runner` and `host`, `runner` on `host`, all
//! of them on `scenario`.

pub mod bench;
pub mod chaos;
pub mod commands;
pub mod host;
pub mod runner;
pub mod scenario;
