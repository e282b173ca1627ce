//! The no-tool lane (C42): requests without tools run one at a time, in the order DSH
//! made them. `LanePlace` is a request's place in that queue, taken inside `stream`
//! itself, so the order is DSH's, not the order in which the requests' tasks first ran.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::pool::PooledProcess;

/// The lane requests without tools take one at a time (C42): holding its lock is the
/// turn; the slot is the provider's persistent client process.
pub(crate) type NoToolLane = Arc<Mutex<Option<PooledProcess>>>;

/// The lane, held: the request's turn, and the persistent client's slot.
pub(crate) type LaneGuard = OwnedMutexGuard<Option<PooledProcess>>;

type Waiting = Pin<Box<dyn Future<Output = LaneGuard> + Send + Sync>>;

/// A request's place in the no-tool lane.
pub(crate) enum LanePlace {
    /// The lane was free when the request was made.
    Held(LaneGuard),
    /// Queued behind the requests made before it (tokio's mutex serves its waiters first
    /// in, first out).
    Queued(Waiting),
}

impl LanePlace {
    /// Takes a place at the back of `lane` now. Polling the lock once queues it; the
    /// turn's task polls it again, with its own waker, in [`LanePlace::reached`].
    pub(crate) fn take(lane: &NoToolLane) -> Self {
        let mut waiting: Waiting = Box::pin(lane.clone().lock_owned());
        let mut cx = Context::from_waker(Waker::noop());
        match waiting.as_mut().poll(&mut cx) {
            Poll::Ready(guard) => Self::Held(guard),
            Poll::Pending => Self::Queued(waiting),
        }
    }

    /// Waits until every request made before this one has let go of the lane.
    pub(crate) async fn reached(self) -> LaneGuard {
        match self {
            Self::Held(guard) => guard,
            Self::Queued(waiting) => waiting.await,
        }
    }
}

impl fmt::Debug for LanePlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Held(_) => "LanePlace::Held",
            Self::Queued(_) => "LanePlace::Queued",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Places are served in the order they were taken, not the order their waits are
    /// first polled (the later request's task running first must not overtake).
    #[tokio::test]
    async fn places_are_served_in_the_order_they_were_taken() {
        let lane: NoToolLane = Arc::default();
        let first = LanePlace::take(&lane);
        let second = LanePlace::take(&lane);
        let third = LanePlace::take(&lane);
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut tasks = tokio::task::JoinSet::new();
        for (name, place) in [("third", third), ("second", second)] {
            let order = order.clone();
            tasks.spawn(async move {
                let _held = place.reached().await;
                order.lock().map(|mut o| o.push(name)).ok();
                tokio::task::yield_now().await;
            });
        }
        // Let both later tasks poll their waits before the first lets go.
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        drop(first.reached().await);
        while tasks.join_next().await.is_some() {}
        let order = order.lock().map(|o| o.clone()).unwrap_or_default();
        assert_eq!(order, ["second", "third"]);
    }
}
