//! The command line: what `dsh-sim` does for each subcommand. The clap definitions are in
//! `cli`; [`dispatch`] parses the command line, runs the subcommand and maps its outcome
//! to the exit code, with the small subcommands' glue; `run_cli` is `dsh-sim run`
//! (selection, report, totals). Each command with more to it has its own module: [`ask`] (one chat turn by
//! hand), [`bench`](mod@bench) (the adapter's speed figures), [`bench_install`] (what the
//! installer's checks cost), [`bench_confinement`] (what confining the server costs at start-up), [`install_cli`] (install, repair or verify the pinned
//! server), [`bridge_session`] (the adapter's real MCP bridge on its own), [`scaffold`]
//! (`dsh-sim new`), [`chaos`](mod@chaos) (seeded fault injection), [`lint`] (checking scenario files without running them) and
//! [`claims`] (the traceability check between claims, `CLAIMS.md` and scenarios, which
//! `lint` and the claims test run).
//!
//! This room is the binary's: its glue reports errors with `anyhow`, which no other room
//! of the library uses. The scenario runner itself is [`crate::runner`]; `dsh-sim tap` is
//! [`crate::runner::client_tap`], since the runner launches a real server through it.

pub mod ask;
pub mod bench;
pub mod bench_confinement;
pub mod bench_install;
pub mod bridge_session;
pub mod chaos;
pub mod claims;
pub(crate) mod cli;
pub mod dispatch;
pub mod install_cli;
pub mod lint;
pub(crate) mod real_loop_args;
pub(crate) mod run_cli;
pub mod scaffold;
