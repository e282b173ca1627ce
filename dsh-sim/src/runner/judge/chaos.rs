//! The chaos invariants (claim B04) as judges: [`watch`] (what a run's process saw:
//! panics, the planted secret in logs, live adapter tasks after disposal),
//! [`invariants`] (every invariant a chaos run is held to) and [`verdict`] (a run's
//! failures from both). The generator that plans the runs is `crate::chaos`.

pub mod invariants;
pub mod verdict;
pub mod watch;
