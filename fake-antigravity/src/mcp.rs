//! The fake's MCP client: how 1.3.0's harness reaches host tools (research §10, §20).

pub mod client;
