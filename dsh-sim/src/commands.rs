//! The command line: the modules behind `dsh-sim`'s subcommands, one per command with more
//! to it than a few lines of glue: [`ask`] (one chat turn by hand), [`bench`](mod@bench)
//! (the adapter's speed figures), [`bench_install`] (what the installer's checks cost),
//! [`install_cli`] (install, repair or verify the pinned server), [`bridge_session`] (the
//! adapter's real MCP bridge on its own), [`scaffold`] (`dsh-sim new`), [`lint`]
//! (checking scenario files without running them) and [`claims`] (the traceability check
//! between claims, `CLAIMS.md` and scenarios, which `lint` and the claims test run).
//!
//! The scenario runner itself is [`crate::runner`]; `dsh-sim tap` is
//! [`crate::runner::client_tap`], since the runner launches a real server through it.

pub mod ask;
pub mod bench;
pub mod bench_install;
pub mod bridge_session;
pub mod claims;
pub mod install_cli;
pub mod lint;
pub mod scaffold;
