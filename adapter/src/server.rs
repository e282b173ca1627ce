//! The managed server: its subprocess (own process group, piped stdio, bounded stderr)
//! and the private scratch directory it runs in.

mod process;
mod scratch;

pub(crate) use process::{ManagedProcess, ServerPipes};
pub(crate) use scratch::ScratchDir;
