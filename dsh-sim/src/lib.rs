//! dsh-sim: DSH in miniature, and the YAML scenario runner that judges the
//! `antigravity-acp` adapter against the scripted fake server (or any ACP server).
//!
//! Map of the crate, room by room (each module's doc says what it owns):
//! - [`scenario`]: the YAML scenario format (what a scenario says, not how it is run),
//!   its strict parser (`scenario::load`), its rules (`scenario::validation`) and
//!   its JSON Schema (`scenario::schema`).
//! - [`host`]: DSH in miniature, the host the adapter is mounted in: the adapter registry
//!   and model precedence ([`host::registry`]), the agent loop ([`host::agent_loop`]),
//!   the stream rules DSH enforces ([`host::stream_rules`]), DSH's tools and permission
//!   policy ([`host::tools`]), the requests beside a chat ([`host::side_requests`]), the
//!   faults DSH itself injects ([`host::dsh_fault`]) and the DSH-side record of a chat
//!   ([`host::transcript`]).
//! - [`runner`]: running one scenario end to end (its own runtime, bound, disposal):
//!   finding and choosing the files ([`runner::discover`], [`runner::selection`]), what a
//!   run needs ([`runner::options`], [`runner::gemini_home`], [`runner::provision`] for
//!   install scenarios, [`runner::client_tap`] for the client-side journal against any
//!   server, `dsh-sim tap`), the judges, all in [`runner::judge`] ([`runner::judge::expect`]
//!   on the transcript, [`runner::judge::wire`] on the journal, the leak checks
//!   [`runner::judge::after_run`] and [`runner::judge::leak`], and the chaos invariants
//!   [`runner::judge::chaos`]), and what a failure leaves ([`runner::artifacts`],
//!   [`runner::sequence`], [`runner::replay`]).
//! - [`chaos`]: `dsh-sim chaos`, seeded fault injection: the fault catalogue
//!   ([`chaos::catalogue`]), the plan of each run ([`chaos::plan`]) and the driver that
//!   runs it through the runner ([`chaos::driver`]); the judges it uses live in the runner.
//! - [`bench`](mod@bench): `dsh-sim bench`, the adapter's figures as ratios to floors
//!   measured in the same run, the floors themselves (a bare SDK client and agent, bare
//!   rmcp), the install and confinement figures ([`bench::install`],
//!   [`bench::confinement`]) and the one median they all use ([`bench::median`]).
//! - [`commands`]: the command line: the clap definitions and each subcommand's glue
//!   (`commands::cli`, [`commands::dispatch`], the binary's `main`), and the commands
//!   with more to them: `commands::run`, [`commands::ask`], [`commands::bench`],
//!   [`commands::chaos`], [`commands::install`], [`commands::bridge`], [`commands::new`],
//!   [`commands::lint`] and the claims check it runs ([`commands::claims`]).
//!
//! The rooms depend one way, each only on the rooms before it: `scenario`, then `host`,
//! then `runner`, then `chaos` and `bench`, then `commands`.
//! The tidy test `dsh_sim_rooms_depend_one_way_as_its_lib_rs_says` (in the adapter's
//! `tests/tidy.rs`) reads that sentence and fails on any `use` that points back.

pub mod bench;
pub mod chaos;
pub mod commands;
pub mod host;
pub mod runner;
pub mod scenario;
