//! `fake-antigravity`: a scriptable fake of Google's Antigravity ACP server 1.3.0.
//!
//! It speaks the recorded 1.3.0 wire shapes over stdio through the official ACP SDK and
//! calls host tools through a real Streamable-HTTP MCP client that announces and sends
//! the harness's protocol version, as 1.3.0 does. It shares no code with the adapter:
//! it judges the adapter from outside.
//!
//! Entry points:
//! - [`main_with_args`]: the whole process (CLI, script, journal, runtime, stdio, signals);
//!   the `fake-antigravity` binary and dsh-sim's `fake-server` subcommand call it.
//! - [`serve()`] with [`ServeOptions`]: one connection over any tokio byte streams, for
//!   in-process use.
//! - [`script`] (the script format), [`journal`] (what the fake records) and
//!   [`script::file::load_script`] / [`script::file::parse_script`].
//!
//! Layout, one folder per responsibility (each readable alone; no two files import
//! each other):
//! - [`acp`]: the ACP methods, their params and error shapes, the update shapes.
//! - [`state`]: the fake agent, sessions, MCP server entries, `GEMINI_HOME` sign-in.
//! - [`turn`]: a prompt turn, its shared context and one file per kind of step.
//! - [`mcp`]: the MCP client that calls host tools.
//! - [`faults`]: the faults a script injects, each family's type beside its behaviour.
//! - [`journal`]: the journal's entries, its writer and the stdio taps.
//! - [`process`]: the command line, the process (signals, start-up), serving, logging.
//! - [`script`]: the script format and its strict loader (the fault types it names are in
//!   [`faults`]).

pub mod acp;
pub mod faults;
pub mod journal;
pub mod lifecycle;
pub mod mcp;
pub mod process;
pub mod script;
pub mod state;
pub mod turn;

pub use journal::JournalEntry;
pub use journal::writer::{JournalError, JournalWriter};
pub use process::main_with_args;
pub use process::serve::{ServeError, ServeOptions, serve};
pub use script::Script;
pub use script::file::{ScriptError, check_script, load_script, parse_script};
