//! The ACP methods the fake answers (docs/antigravity-1.3.0.md §3–§7): routing every message, the
//! `initialize` catalogue, sign-in (including the loopback browser flow), sessions and
//! their configuration, the pydantic-style param checks and error shapes, and the
//! `session/update` shapes every step sends (and Gemini CLI's shapes of an MCP call).

pub mod auth_methods;
pub mod browser_sign_in;
pub mod catalogue;
pub mod config_methods;
pub mod dispatch;
pub mod gemini_cli_updates;
pub mod late_permission;
pub mod params;
pub mod rpc_errors;
pub mod session_methods;
pub mod session_updates;
