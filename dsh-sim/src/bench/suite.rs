//! The scenario suite as a benchmark: its wall time when its scenarios run one after
//! another in this process (as `dsh-sim run` runs them), and how that time divides: the
//! CPU time of this process (the adapter and the simulator, an upper bound of the
//! adapter's own share) and of the servers it launched and reaped.
//!
//! CPU times come from `/proc/self/stat` in `USER_HZ` ticks (100 a second on Linux).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::runner::{RunnerOptions, Verdict, run_file};

/// What one run of the suite took.
#[derive(Debug, Clone, Copy)]
pub struct SuiteFigures {
    /// Scenarios run.
    pub scenarios: usize,
    /// Scenarios that failed.
    pub failed: usize,
    /// Wall time of the whole run.
    pub wall: Duration,
    /// CPU time of this process (adapter and simulator).
    pub runner_cpu: Duration,
    /// CPU time of the reaped children (the servers).
    pub servers_cpu: Duration,
}

/// `(self, children)` CPU time so far.
fn cpu_times() -> anyhow::Result<(Duration, Duration)> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let (_, after_name) = stat.rsplit_once(')').context("no ')' in /proc/self/stat")?;
    let fields: Vec<u64> = after_name
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().unwrap_or_default())
        .collect();
    // After the state: ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
    // utime stime cutime cstime.
    let tick = |i: usize| Duration::from_millis(fields.get(i).copied().unwrap_or_default() * 10);
    Ok((tick(10) + tick(11), tick(12) + tick(13)))
}

/// Runs every scenario under `dir` on the fake (this binary), one after another. Call it
/// outside any tokio runtime: each scenario starts its own.
pub fn run_suite(program: &Path, dir: &Path) -> anyhow::Result<SuiteFigures> {
    let files = crate::runner::discover::scenario_files(&[dir.to_owned()])?;
    if files.is_empty() {
        bail!("no scenario files under {}", dir.display());
    }
    let options = RunnerOptions::with_fake(program.to_owned());
    let (runner_before, servers_before) = cpu_times()?;
    let started = Instant::now();
    let mut failed = 0;
    for file in &files {
        if matches!(run_file(file, &options).verdict, Verdict::Fail(_)) {
            failed += 1;
        }
    }
    let wall = started.elapsed();
    let (runner_after, servers_after) = cpu_times()?;
    Ok(SuiteFigures {
        scenarios: files.len(),
        failed,
        wall,
        runner_cpu: runner_after.saturating_sub(runner_before),
        servers_cpu: servers_after.saturating_sub(servers_before),
    })
}
