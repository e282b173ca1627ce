//! The fake's MCP client: how 1.3.0's harness reaches host tools (docs/antigravity-1.3.0.md §10, §20).
//!
//! [`client`] is the client; [`exchange`] holds what its exchanges share with the MCP
//! client faults (`faults/mcp_fault_calls.rs`), which the client calls and which never
//! import it.

pub mod client;
pub mod exchange;
