//! What one served connection knows: the fake agent (script, sign-in, journal, logger),
//! its sessions and their model/mode, the MCP servers each session was given, the
//! sign-in state read from `GEMINI_HOME`, and what the fake writes there (each session's
//! conversation files, `settings.json`'s `auth.type`, the token's removal), and the session
//! files it holds open while it runs.

pub mod conversation_files;
pub mod fake_agent;
pub mod gemini_home;
pub mod held_files;
pub mod mcp_servers;
pub mod session_config;
pub mod sessions;
pub mod stored_credentials;
