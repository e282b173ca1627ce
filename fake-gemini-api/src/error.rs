//! The errors of starting and using a `ModelApi`.

use std::time::Duration;

use crate::journal::JournalError;
use crate::script::ScriptError;

/// Why the fake could not start, or a wait ran out.
#[derive(Debug, thiserror::Error)]
pub enum ModelApiError {
    /// The script does not check.
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// The journal cannot be created.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The loopback listener cannot be bound or read.
    #[error("cannot listen on 127.0.0.1: {0}")]
    Listen(#[source] std::io::Error),
    /// No journal entry matched within the bound.
    #[error("no matching journal entry within {0:?}")]
    JournalWaitTimedOut(Duration),
}
