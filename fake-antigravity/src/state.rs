//! What one served connection knows: the fake agent (script, sign-in, journal, logger),
//! its sessions and their model/mode, the MCP servers each session was given, and the
//! sign-in state read from `GEMINI_HOME`.

pub mod fake_agent;
pub mod gemini_home;
pub mod mcp_servers;
pub mod session_config;
pub mod sessions;
