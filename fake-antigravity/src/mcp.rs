//! The fake's MCP client: how 1.3.0's harness reaches host tools (docs/antigravity-1.3.0.md §10, §20).

pub mod client;
pub mod exchange;
pub mod faults;
