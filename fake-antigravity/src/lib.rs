//! `fake-antigravity`: a scriptable fake of Google's Antigravity ACP server 1.3.0.
//!
//! It speaks the recorded 1.3.0 wire shapes over stdio through the official ACP SDK and
//! calls host tools through a real MCP client (rmcp). It shares no code with the adapter:
//! it judges the adapter from outside.
//!
//! Entry points:
//! - [`main_with_args`]: the whole process (CLI, script, journal, runtime, stdio, signals);
//!   the `fake-antigravity` binary and dsh-sim's `fake-server` subcommand call it.
//! - [`serve()`] with [`ServeOptions`]: one connection over any tokio byte streams, for
//!   in-process use.
//! - [`script`] (the script format), [`journal`] (what the fake records) and
//!   [`script_file::load_script`] / [`script_file::parse_script`].

pub mod auth_methods;
pub mod catalogue;
pub mod cli;
pub mod config_methods;
pub mod dispatch;
pub mod expectations;
pub mod fake_agent;
pub mod glog;
pub mod journal;
pub mod journal_writer;
pub mod lifecycle;
pub mod mcp_client;
pub mod mcp_servers;
pub mod parallel_step;
pub mod params;
pub mod permission_request;
pub mod process;
pub mod prompt_turn;
pub mod rpc_errors;
pub mod script;
pub mod script_file;
pub mod serve;
pub mod server_owned_steps;
pub mod session_config;
pub mod session_methods;
pub mod session_updates;
pub mod sessions;
pub mod stdio_pipes;
pub mod tool_call_step;
pub mod turn_select;
pub mod wire_tap;

pub use journal::JournalEntry;
pub use journal_writer::{JournalError, JournalWriter};
pub use process::main_with_args;
pub use script::Script;
pub use script_file::{ScriptError, check_script, load_script, parse_script};
pub use serve::{ServeError, ServeOptions, serve};
