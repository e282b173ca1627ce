//! `dsh-sim chaos`: seeded fault injection (claim B04). For each run index a seeded
//! generator ([`rng`], SplitMix64) picks a base scenario (by default the fast fake-only
//! ones, [`plan::DEFAULT_AREAS`]), a fault from the catalogue ([`catalogue`]) and the
//! point where it strikes (a frame index, a byte offset, a stall's length); the run is an
//! ordinary scenario with that one fault key added, small bounds, a planted secret, and
//! `expect: { chaos: ... }` in place of its own expectations, judged by the invariants
//! (`runner::judge::chaos`, with what its watch saw: panics, the secret in logs, live
//! adapter tasks) and by the runner's leak checks. [`driver`] runs a session and tallies
//! it. This room is the generator (rng, plan, catalogue, driver): it calls the runner,
//! and the runner's judges never call back.
//!
//! What a replay reproduces, and what it cannot: the fault decisions are deterministic.
//! `--seed S --run K` (or the replay YAML it writes) gives the same base, the same fault,
//! the same frame index and byte offset, the same stall length and the same secret, and
//! the fake strikes at the same frame of every process it starts. The OS scheduler is not:
//! which frames precede the fault's index can vary when the fake writes concurrently
//! (notifications of a turn racing a response), where a pipe read splits the stream, when
//! a timeout fires against a stall, and what a process killed mid-write had flushed. A
//! failure that depends on such an interleaving may need the replay run a few times (or
//! under load) to show again; the fault itself is always the same.

pub mod catalogue;
pub mod driver;
pub mod plan;
pub mod rng;
