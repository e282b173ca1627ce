//! `dsh-sim`: runs YAML scenarios against the `antigravity-acp` adapter
//! (`dsh-sim run PATH...`), and hosts the scripted fake server
//! (`dsh-sim fake-server ARGS...`) that the adapter launches during a run. It also starts
//! scenarios (`new`), checks them without running (`lint`), prints their JSON Schema
//! (`schema`), serves the adapter's real MCP bridge on its own (`bridge`) and measures the
//! adapter (`bench`).
//!
//! The command line (its clap definitions and each subcommand's glue) is the library's
//! `commands` room; this file only hands over to it.

use std::process::ExitCode;

fn main() -> ExitCode {
    dsh_sim::commands::dispatch::main()
}
