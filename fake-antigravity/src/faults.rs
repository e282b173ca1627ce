//! The fake's faults, one family per pair of files: the type a script names a fault by
//! (parsed from the scenario's `fake:`) beside what the fake does when it strikes, with
//! file names that pair them. A fault is read in one place, not split between the script
//! format (`script/`) and the rooms that carry it out.
//!
//! - Server faults (`fake.faults`), done to the frames the fake writes on stdout:
//!   [`server_faults`] (`ServerFault`, `ServerFaultKind`) and [`server_fault_writer`] (the
//!   `FaultWriter` on the process's stdout, which also plants `fake.planted_secret`).
//! - MCP client faults (`mcp_client.fault`), done to one `tools/call` of the fake's MCP
//!   client: [`mcp_faults`] (`McpFault`, `McpFaultKind`) and [`mcp_fault_calls`] (the
//!   requests a struck call makes instead, on real loopback HTTP).
//!
//! Each fault that acts is journaled as it acts (`ServerFaultApplied`, `McpFaultApplied`):
//! a scripted fault the run never reached leaves no entry, so a judge can tell the two
//! apart.
//!
//! The script (`script.rs`) imports the types; the process (`process.rs`) imports the
//! writer, the MCP client (`mcp/client.rs`) and the prompt turn the calls. The behaviour
//! imports the script and the helpers it writes and journals with
//! (`process/queued_bytes.rs`, `process/abrupt_end.rs`, `mcp/exchange.rs`,
//! `journal/writer.rs`), never the file that imports it, and no type file imports anything
//! of the fake: no two files import each other.

pub mod mcp_fault_calls;
pub mod mcp_faults;
pub mod server_fault_writer;
pub mod server_faults;
