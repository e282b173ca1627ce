//! The command line: what `dsh-sim` does for each subcommand. The clap definitions are in
//! `cli`; [`dispatch`] parses the command line, runs the subcommand and maps its outcome
//! to the exit code, with the small subcommands' glue. A subcommand with more to it has
//! its own module, named after it: `run` (selection, report, totals), [`ask`] (one chat
//! turn by hand), [`bench`](mod@bench) (the report of `dsh-sim bench`), [`install`]
//! (install, repair or verify the pinned server), [`bridge`] (the adapter's real MCP
//! bridge on its own), [`new`] (a scenario from a template), [`chaos`](mod@chaos) (seeded
//! fault injection), [`lint`] (checking scenario files without running them),
//! [`claims`] (the traceability check between claims, `CLAIMS.md` and scenarios, which
//! `lint` and the claims test run) and [`findings`] (what a run against a real agent
//! showed, read from its artefacts' journals). What the benchmark subcommands measure is
//! [`crate::bench`]'s.
//!
//! This room is the binary's: its glue reports errors with `anyhow`, which no other room
//! of the library uses. The scenario runner itself is [`crate::runner`]; `dsh-sim tap` is
//! [`crate::runner::client_tap`], since the runner launches a real server through it.

pub mod ask;
pub mod bench;
pub mod bridge;
pub mod chaos;
pub mod claims;
pub(crate) mod cli;
pub mod dispatch;
pub mod findings;
pub mod install;
pub mod lint;
pub mod new;
pub(crate) mod real_loop_args;
pub(crate) mod run;
