//! `process.slow_death_ms`: a helper of the fake that dies only a while after the fake
//! itself, however the fake ends (SIGKILL included), as a real server's re-exec'd or
//! detached helpers do.
//!
//! The helper is the fake's own executable as a helper ([`super::helper`]) that waits for
//! its stdin to end and then sleeps. On Unix it runs in a process group of its own, so
//! the adapter's group kill does not reach it: it learns of the fake's death from its
//! stdin, a pipe whose only write end the fake holds for its whole life (the kernel
//! closes it when the fake dies, however it dies). On Windows it stays in the adapter's
//! Job Object (a job the adapter made allows no breakaway), so the tree kill takes it
//! with the fake: what the adapter's job promises, shown by the same scenarios. It inherits the fake's stderr, so the
//! server's stderr pipe stays open until the helper is gone too. Its pid is journaled
//! (`ChildSpawned`): the runner's leak check waits for it, bounded, and reports it only
//! when it outlives the bound.

use std::process::Stdio;

use crate::journal::JournalEntry;
use crate::journal::writer::JournalWriter;
use crate::process::glog::Glog;

/// Starts the helper that outlives the fake by `ms` milliseconds.
pub fn spawn_slow_death_helper(ms: u64, journal: Option<&JournalWriter>, log: Glog) {
    let spawned = super::helper::helper_command(ms, true).and_then(|mut command| {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        command.spawn()
    });
    match spawned {
        Ok(mut child) => {
            log.info(
                "main.py:92",
                &format!("detached helper {} started", child.id()),
            );
            if let Some(journal) = journal {
                journal.record(&JournalEntry::ChildSpawned { pid: child.id() });
            }
            // The write end stays open for the fake's whole life: the helper's `read`
            // returns only when the fake is gone.
            std::mem::forget(child.stdin.take());
            // Dropping a std Child neither kills nor reaps it.
            drop(child);
        }
        Err(e) => log.error("main.py:93", &format!("cannot start the helper: {e}")),
    }
}
