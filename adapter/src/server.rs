//! The managed server: its subprocess (own process group, piped stdio, bounded stderr),
//! the private scratch directory it runs in, the allowlisted environment it gets, and
//! where its command comes from (an explicit command or the verified install).

mod environment;
mod process;
mod scratch;
mod source;

pub use environment::{ALLOWED_PREFIXES, ALLOWED_VARIABLES, is_allowed};
pub(crate) use process::{ManagedProcess, ServerPipes};
pub(crate) use scratch::ScratchDir;
pub(crate) use source::{LaunchLine, ServerLauncher};
