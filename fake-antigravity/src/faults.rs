//! The fake's faults, one family per pair of files: the type a script names a fault by
//! (parsed from the scenario's `fake:`) beside what the fake does when it strikes, with
//! file names that pair them. A fault is read in one place, not split between the script
//! format (`script/`) and the rooms that carry it out.
//!
//! - Server faults (`fake.faults`), done to the frames the fake writes on stdout:
//!   [`server_faults`] (`ServerFault`, `ServerFaultKind`).
//!
//! The script (`script.rs`) imports the types; nothing here imports the script's own
//! module, so no two files import each other.

pub mod server_faults;
