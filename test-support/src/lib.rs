//! `test-support`: what the workspace's tests share, in one place.
//!
//! - [`TestResult`] and [`Failure`]: what tests return, so they use `?` instead of
//!   `unwrap`.
//! - [`within`]: a piece of work with a time bound, failing with a sentence that says
//!   what did not happen in time (tests wait on events, never on sleeps).
//! - [`process_is_live`]: a portable liveness check (`kill(pid, 0)`), used by tests and by
//!   the simulator's leak check; [`process_is_running`] also tells a zombie (an orphan
//!   nobody reaps) from a running process.
//! - [`test_overrides`]: the test addon's overrides document and its variable, which
//!   `dsh-sim run --real-loop` writes and the plugin's test addon reads.

mod bounds;
mod liveness;
pub mod test_overrides;
mod watchdog;

pub use bounds::{NotWithin, within};
pub use liveness::{process_is_live, process_is_running};
pub use watchdog::{RealTimeWatchdog, real_time_watchdog};

/// Any error a test step can fail with.
pub type Failure = Box<dyn std::error::Error + Send + Sync>;

/// What tests return, so they use `?` instead of `unwrap`.
pub type TestResult = Result<(), Failure>;
