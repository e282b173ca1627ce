//! The fake's faults, one family per pair of files: the type a script names a fault by
//! (parsed from the scenario's `fake:`) beside what the fake does when it strikes, with
//! file names that pair them. A fault is read in one place, not split between the script
//! format (`script/`) and the rooms that carry it out.
//!
//! - Server faults (`fake.faults`), done to the frames the fake writes on stdout:
//!   [`server_faults`] (`ServerFault`, `ServerFaultKind`) and [`server_fault_writer`] (the
//!   `FaultWriter` on the process's stdout, which also plants `fake.planted_secret`).
//! - MCP client faults (`mcp_client.fault`), done to one `tools/call` of the fake's MCP
//!   client: [`mcp_faults`] (`McpFault`, `McpFaultKind`).
//!
//! The script (`script.rs`) imports the types and the process (`process.rs`) the writer;
//! the writer imports the script and the stdout helpers of `process/` it writes with, but
//! no type file imports either, so no two files import each other.

pub mod mcp_faults;
pub mod server_fault_writer;
pub mod server_faults;
