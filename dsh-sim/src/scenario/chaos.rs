//! `expect.chaos`: judge a scenario only by the chaos invariants (claim B04), as every
//! `dsh-sim chaos` run and every replay it writes is judged (see `crate::chaos`), and why
//! such a run is for dsh-sim's loop only.

use schemars::JsonSchema;
use serde::Deserialize;

/// Why a chaos run (and the replay file it writes) runs under dsh-sim's loop only: its
/// `simulator_only` reason.
pub const CHAOS_SIMULATOR_ONLY: &str = "expect.chaos: the chaos invariants watch the adapter inside dsh-sim's process (its tasks, panics, logs and timings)";

/// `expect: { chaos: { terminal_bound_ms: N } }`: the scenario's own expectations are
/// replaced by the chaos invariants (`dsh-sim/src/runner/judge/chaos/invariants.rs`):
/// every generate ends with exactly one terminal chunk within `terminal_bound_ms`; no
/// panic; no tool run twice for one MCP call and no MCP call answered twice; DSH's stream
/// contract; no adapter task alive after disposal; the fake's `planted_secret` in no log
/// line or error. The runner's leak checks stay on, as for every scenario.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChaosExpectation {
    /// The bound on each generate, from the `stream` call to its terminal chunk, in
    /// milliseconds.
    pub terminal_bound_ms: u64,
}
