//! The chaos invariants (claim B04), judged after every run whose scenario says
//! `expect: { chaos: ... }` (every `dsh-sim chaos` run, every replay it wrote):
//! 1. every `generate` ends with exactly one terminal chunk, within the bound
//!    (`terminal_bound_ms`), unless DSH itself dropped the stream;
//! 2. DSH's stream contract held (one finish, nothing after it, blocks closed: the agent
//!    loop's `StreamValidator` turns a break into a `Violation` outcome);
//! 3. no panic on any thread;
//! 4. no DSH tool executed more often than the fake's MCP client called it, and no MCP
//!    call answered more often than it was made (the fake's journal);
//! 5. no adapter task alive once the adapter was disposed;
//! 6. the fake's planted secret in no log line, no chunk or error DSH saw, and no failure
//!    the runner reports.
//!
//! Processes, bridge ports and scratch folders left behind are the runner's leak checks,
//! which run for every scenario.

use std::collections::BTreeMap;
use std::time::Duration;

use antigravity_acp::contract::StreamChunk;
use fake_antigravity::journal::JournalEntry;

use crate::host::transcript::{RunOutcome, Transcript};
use crate::runner::judge::chaos::watch::Watched;
use crate::scenario::ChaosExpectation;

/// Everything a run left that the invariants judge.
#[derive(Debug)]
pub struct Observed<'a> {
    /// DSH's record.
    pub transcript: &'a Transcript,
    /// The fake's journal, one list per process.
    pub journal: &'a [Vec<JournalEntry>],
    /// Panics and log lines the watch saw.
    pub watched: &'a Watched,
    /// The planted secret, if the fake was given one.
    pub secret: Option<&'a str>,
    /// Adapter tasks alive after disposal (once they had a bound to end).
    pub live_tasks: usize,
    /// Every other failure the runner found (leaks, bounds), searched for the secret.
    pub failures: &'a [String],
}

/// The slowest generate of a run, against its bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slowest {
    /// From the `stream` call to its terminal chunk.
    pub after: Duration,
    /// The bound.
    pub bound: Duration,
}

impl Slowest {
    /// `after / bound`.
    pub fn ratio(&self) -> f64 {
        self.after.as_secs_f64() / self.bound.as_secs_f64().max(f64::EPSILON)
    }
}

/// What the judge found.
#[derive(Debug, Clone, Default)]
pub struct ChaosOutcome {
    /// Every broken invariant, as a sentence.
    pub violations: Vec<String>,
    /// The run's slowest terminal chunk.
    pub slowest: Option<Slowest>,
    /// The kind names of the server and MCP client faults the fake journaled as applied
    /// (`ServerFaultApplied`, `McpFaultApplied`, any process), to tell whether the run's
    /// fault struck.
    pub faults_applied: Vec<String>,
}

/// Judges one run.
pub fn judge(expect: &ChaosExpectation, observed: &Observed<'_>) -> ChaosOutcome {
    let bound = Duration::from_millis(expect.terminal_bound_ms);
    let mut outcome = ChaosOutcome {
        faults_applied: crate::runner::judge::fake_faults::applied_names(observed.journal),
        ..ChaosOutcome::default()
    };
    terminals(observed.transcript, bound, &mut outcome);
    let violations = &mut outcome.violations;
    violations.extend(observed.watched.panics.iter().cloned());
    violations.extend(observed.watched.blind.iter().cloned());
    violations.extend(tool_runs(observed.transcript, observed.journal));
    if observed.live_tasks > 0 {
        violations.push(format!(
            "{} adapter task(s) still alive after disposal",
            observed.live_tasks
        ));
    }
    if let Some(secret) = observed.secret {
        violations.extend(secret_leaks(secret, observed));
    }
    outcome
}

/// Invariants 1 and 2, and the slowest terminal.
fn terminals(transcript: &Transcript, bound: Duration, outcome: &mut ChaosOutcome) {
    for (r, run) in transcript.runs.iter().enumerate() {
        let run_no = r + 1;
        match &run.outcome {
            RunOutcome::Violation { message } => outcome.violations.push(format!(
                "run {run_no}: DSH's stream contract broken: {message}"
            )),
            RunOutcome::Unfinished => outcome
                .violations
                .push(format!("run {run_no}: never ended (no terminal chunk)")),
            RunOutcome::HostFailure { message } => outcome
                .violations
                .push(format!("run {run_no}: DSH could not go on: {message}")),
            _ => {}
        }
        let dropped = matches!(run.outcome, RunOutcome::DroppedByDsh);
        let last = run.generations.len().saturating_sub(1);
        for (g, generation) in run.generations.iter().enumerate() {
            let finishes = generation
                .parts
                .iter()
                .filter(|p| matches!(p, StreamChunk::Finish { .. }))
                .count();
            let dropped_here = dropped && g == last;
            if finishes != 1 && !dropped_here {
                outcome.violations.push(format!(
                    "run {run_no}, generate {}: {finishes} terminal chunks (exactly one is due)",
                    g + 1
                ));
            }
            let Some(after) = generation.terminal_after else {
                continue;
            };
            if after > bound {
                outcome.violations.push(format!(
                    "run {run_no}, generate {}: the terminal chunk came after {after:?}, past its bound {bound:?}",
                    g + 1
                ));
            }
            let slowest = Slowest { after, bound };
            if outcome.slowest.is_none_or(|s| s.after < after) {
                outcome.slowest = Some(slowest);
            }
        }
    }
}

/// Invariant 4: executions against MCP calls, MCP answers against calls. One call is
/// one JSON-RPC id of one MCP server (a request sent twice under one id, or replayed
/// after its turn, is still one call), so DSH may run a tool at most once per distinct
/// id, and each id may get at most one result (a refusal, an error answer, is not one).
/// A journal without ids (an older fake) counts each request as its own call.
fn tool_runs(transcript: &Transcript, journal: &[Vec<JournalEntry>]) -> Vec<String> {
    use std::collections::BTreeSet;
    let mut calls: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut results: BTreeMap<String, u32> = BTreeMap::new();
    for (process, entries) in journal.iter().enumerate() {
        // Ids count from 1 on each MCP connection (each session's bridge): a connection
        // begins with its `initialize`.
        let mut connections: BTreeMap<&str, u32> = BTreeMap::new();
        for (n, entry) in entries.iter().enumerate() {
            match entry {
                JournalEntry::McpRequest { server, method, .. } if method == "initialize" => {
                    *connections.entry(server.as_str()).or_insert(0) += 1;
                }
                JournalEntry::McpRequest {
                    server,
                    method,
                    params,
                    rpc_id,
                } if method == "tools/call" => {
                    let connection = connections.get(server.as_str()).copied().unwrap_or(0);
                    let call = match rpc_id {
                        Some(id) => format!("{process} {server} {connection} #{id}"),
                        None => format!("{process} {server} entry {n}"),
                    };
                    if let Some(name) = params.get("name").and_then(|n| n.as_str()) {
                        calls.entry(name.to_owned()).or_default().insert(call);
                    }
                }
                JournalEntry::McpResponse {
                    server,
                    method,
                    result: Some(_),
                    rpc_id: Some(id),
                    ..
                } if method == "tools/call" => {
                    let connection = connections.get(server.as_str()).copied().unwrap_or(0);
                    let call = format!("{process} {server} {connection} #{id}");
                    *results.entry(call).or_insert(0) += 1;
                }
                _ => {}
            }
        }
    }
    let mut violations = Vec::new();
    for (tool, runs) in &transcript.executions {
        let made: usize = calls
            .iter()
            .filter(|(name, _)| names_tool(name, tool))
            .map(|(_, ids)| ids.len())
            .sum();
        if *runs as usize > made {
            violations.push(format!(
                "DSH executed `{tool}` {runs} time(s) for {made} MCP call(s)"
            ));
        }
    }
    for (call, answers) in &results {
        if *answers > 1 {
            violations.push(format!(
                "an MCP call was answered {answers} times (one result each): {call}"
            ));
        }
    }
    violations
}

/// Whether the MCP tool `mcp_name` is DSH's `tool`: the bridge offers each DSH tool as
/// `<readable prefix>_<first hex digits of SHA-256 of its exact name>`.
fn names_tool(mcp_name: &str, tool: &str) -> bool {
    use sha2::Digest;
    let Some((_, digest)) = mcp_name.rsplit_once('_') else {
        return false;
    };
    digest.len() >= 8 && hex::encode(sha2::Sha256::digest(tool.as_bytes())).starts_with(digest)
}

/// Invariant 6.
fn secret_leaks(secret: &str, observed: &Observed<'_>) -> Vec<String> {
    let mut leaks: Vec<String> = observed
        .watched
        .log_hits
        .iter()
        .map(|line| format!("the planted secret reached a log line: {line}"))
        .collect();
    if serde_json::to_string(observed.transcript).is_ok_and(|text| text.contains(secret)) {
        leaks.push("the planted secret reached DSH (a chunk or an error it saw)".to_owned());
    }
    leaks.extend(
        observed
            .failures
            .iter()
            .filter(|f| f.contains(secret))
            .map(|f| format!("the planted secret reached an error: {f}")),
    );
    leaks
}
