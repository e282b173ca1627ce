//! The managed server: its subprocess (own process tree, piped stdio, bounded stderr),
//! the private scratch directory it runs in, the allowlisted environment it gets, its
//! confinement by the kernel (Landlock, B06), where its command comes from (an explicit
//! command or the verified install), what is known to stop it on this machine, and the
//! conversations it keeps on disk for the adapter's sessions (B08).

#[allow(
    clippy::disallowed_types,
    reason = "it confines the server's Command (ManagedProcess's) before the spawn"
)]
pub mod confine;
#[allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "B08: the server's own files for the sessions this adapter opened (removed once \
              their process is done) and the ledger of those sessions beside the process's \
              scratch folder; never a file the adapter did not derive from a recorded id"
)]
mod conversations;
mod environment;
#[allow(
    clippy::disallowed_methods,
    reason = "reads the sign-in method the server's own settings.json names, so the adapter \
              never switches it (issue 25 section 2); writes nothing"
)]
mod home;
#[allow(
    clippy::disallowed_methods,
    reason = "reads the kernel's account of this process (/proc/self/smaps: its page size), \
              only after a server failed to start; no user file"
)]
pub(crate) mod machine_fit;
#[allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "ManagedProcess spawns the server: the one process the adapter starts (C15)"
)]
mod process;
#[allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "a turn's private scratch directory, its temp directory and a missing credentials \
              home: the only directories the adapter makes (C04, C31)"
)]
mod scratch;
mod source;

pub use confine::Enforcement;
pub use confine::allowlist::{READ_ONLY_DEVICES, READ_WRITE_DEVICES, RUNTIME_READ_PATHS};
pub(crate) use conversations::{
    ConversationLedger, Leftovers, leftovers as conversation_leftovers,
    sweep as sweep_conversations,
};
#[cfg(test)]
pub(crate) use environment::env_of;
pub use environment::{ALLOWED_PREFIXES, ALLOWED_VARIABLES, is_allowed};
pub(crate) use home::{SettledMethod, server_home, settled_method};
pub(crate) use process::{ManagedProcess, ServerPipes};
pub(crate) use scratch::ScratchDir;
pub(crate) use source::{LaunchLine, ServerLauncher};
