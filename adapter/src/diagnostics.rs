//! A cheap public diagnostic: how many tasks the adapter spawned are still alive. Every
//! task the adapter spawns itself (turn tasks, prompt tasks, connection drivers, bridge
//! servers, stderr drains, the pool's disposals and expiry) runs inside `counted`, whose
//! guard adds one when the task is made and takes it away when the task's future is
//! dropped, finished or aborted alike. `dsh-sim chaos` checks it is back to zero once a
//! provider was disposed (claim B04).
//!
//! The count is the process's, across every provider: a host running one provider at a
//! time (as `dsh-sim` does) reads it as that provider's.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};

static LIVE_TASKS: AtomicUsize = AtomicUsize::new(0);

/// How many adapter tasks are alive in this process.
pub fn live_tasks() -> usize {
    LIVE_TASKS.load(Ordering::Acquire)
}

/// Counts one live task until it is dropped.
struct TaskGuard;

impl TaskGuard {
    fn new() -> Self {
        LIVE_TASKS.fetch_add(1, Ordering::AcqRel);
        Self
    }
}

impl Drop for TaskGuard {
    fn drop(&mut self) {
        LIVE_TASKS.fetch_sub(1, Ordering::AcqRel);
    }
}

/// `future`, counted as a live task from now until it is dropped.
pub(crate) fn counted<F: Future>(future: F) -> impl Future<Output = F::Output> {
    let guard = TaskGuard::new();
    async move {
        let _guard = guard;
        future.await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_counted_task_is_counted_until_it_is_dropped() {
        let before = live_tasks();
        let task = counted(std::future::pending::<()>());
        assert!(live_tasks() > before);
        drop(task);
        // Other tests may run tasks beside this one; this one is gone again.
        let finished = counted(async {});
        finished.await;
        assert!(live_tasks() <= before + 1);
    }
}
