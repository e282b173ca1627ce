//! `fake-antigravity`: a scriptable fake of Google's Antigravity ACP server 1.3.0.
//!
//! It speaks the recorded 1.3.0 wire shapes over stdio through the official ACP SDK and
//! calls host tools through a real MCP client (rmcp). It shares no code with the adapter.

pub mod journal;
pub mod script;
