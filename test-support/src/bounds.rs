//! Time bounds for tests: [`within`] runs a future under a bound and names what did not
//! happen in time, so a hung test fails with a sentence instead of hanging CI.

use std::time::Duration;

/// `what` did not happen within `bound`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotWithin {
    /// What was awaited, as the test named it.
    pub what: String,
    /// The bound it missed.
    pub bound: Duration,
}

impl std::fmt::Display for NotWithin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} did not happen within {:?}", self.what, self.bound)
    }
}

impl std::error::Error for NotWithin {}

/// Awaits `work` for at most `bound` (in tokio's clock, so a paused clock bounds in
/// virtual time).
pub async fn within<T>(
    bound: Duration,
    what: &str,
    work: impl Future<Output = T>,
) -> Result<T, NotWithin> {
    tokio::time::timeout(bound, work)
        .await
        .map_err(|_| NotWithin {
            what: what.to_owned(),
            bound,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_missed_bound_names_what_was_awaited() {
        let missed = within(
            Duration::from_secs(1),
            "the answer",
            std::future::pending::<()>(),
        )
        .await
        .err();
        assert_eq!(
            missed.map(|e| e.to_string()),
            Some("the answer did not happen within 1s".to_owned())
        );
    }

    #[tokio::test]
    async fn work_done_in_time_gives_its_output() {
        assert_eq!(
            within(Duration::from_secs(1), "x", async { 3 }).await,
            Ok(3)
        );
    }
}
