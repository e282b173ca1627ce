//! Running a chaos session: plan each run ([`super::plan`]), run it as an ordinary
//! scenario on one shared tokio runtime, tally it, and for a failing run print its seed,
//! index and replay command and write its replay scenario. `--run K` runs one run with
//! full artefacts and always writes its replay.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::chaos::catalogue::FaultRow;
use crate::chaos::plan::{Base, plan};
use crate::runner::judge::chaos::invariants::Slowest;
use crate::runner::{RunnerOptions, Verdict, run_scenario};

/// What a chaos session runs.
#[derive(Debug, Clone)]
pub struct ChaosSettings {
    /// The seed.
    pub seed: u64,
    /// The run indexes (`--runs M`: `0..M`; `--run K`: `K..K+1`).
    pub runs: std::ops::Range<u64>,
    /// The base scenarios.
    pub bases: Vec<Base>,
    /// The fault rows to pick from.
    pub rows: Vec<&'static FaultRow>,
    /// Where replays (and with `full_artifacts`, artefacts) go.
    pub out: PathBuf,
    /// Keep every artefact of every run and write every replay (`--run K`).
    pub full_artifacts: bool,
}

/// The tally of one fault kind.
#[derive(Debug, Clone, Copy, Default)]
pub struct FaultTally {
    /// Runs that picked it.
    pub picked: u64,
    /// Of those, runs whose fault struck: a server or MCP client fault the fake journaled
    /// as applied, a DSH fault the runner saw strike; process switches and install faults
    /// always strike.
    pub struck: u64,
    /// Runs that broke an invariant.
    pub failed: u64,
}

/// A failing run.
#[derive(Debug, Clone)]
pub struct FailedRun {
    /// Why (its seed, index, fault, base and replay went to the log as it failed).
    pub reasons: Vec<String>,
}

/// What a session found.
#[derive(Debug, Clone, Default)]
pub struct ChaosSummary {
    /// Runs done.
    pub runs: u64,
    /// How long they took.
    pub elapsed: Duration,
    /// By fault name.
    pub by_fault: BTreeMap<&'static str, FaultTally>,
    /// The failing runs.
    pub failed: Vec<FailedRun>,
    /// The slowest terminal chunk relative to its bound, with its run index.
    pub slowest: Option<(Slowest, u64)>,
}

impl ChaosSummary {
    /// Violations in all (one failing run may break several invariants).
    pub fn violations(&self) -> usize {
        self.failed.iter().map(|f| f.reasons.len()).sum()
    }
}

/// Runs the session with `program` (a dsh-sim binary) as the fake; progress and failures
/// go to `log`.
pub fn run_session(
    settings: &ChaosSettings,
    program: &Path,
    log: &mut dyn Write,
) -> Result<ChaosSummary, String> {
    run_logged(settings, program, log).map_err(|e| e.to_string())?
}

fn run_logged(
    settings: &ChaosSettings,
    program: &Path,
    log: &mut dyn Write,
) -> std::io::Result<Result<ChaosSummary, String>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut options = RunnerOptions::with_fake(program.to_owned());
    options.faults_drawn = true;
    options.time_bound = Duration::from_secs(8);
    options.dispose_bound = Duration::from_secs(5);
    options.limits.stream_close_bound = Duration::from_secs(2);
    // A burst of 65 calls reaches the bridge over a few milliseconds, and the calls that
    // arrived together form one round: on a loaded machine nearly one call per round
    // (seed 1796184962 run 1166 took 12 rounds unloaded, more than 16 under load), so DSH
    // gets a generation per call plus the answer before it gives up.
    options.limits.max_generations_per_run =
        2 + fake_antigravity::faults::mcp_fault_calls::BURST_CALLS as usize;
    if settings.full_artifacts {
        options.artifacts_root = Some(settings.out.join("artifacts"));
        options.keep_passing_artifacts = true;
    }
    let seed = settings.seed;
    let mut summary = ChaosSummary::default();
    let started = Instant::now();
    for index in settings.runs.clone() {
        let planned = plan(seed, index, &settings.bases, &settings.rows);
        let source = PathBuf::from(format!("chaos/seed-{seed}-run-{index}.yaml"));
        let report = match crate::scenario::parse(&planned.yaml, &source) {
            Ok(scenario) => run_scenario(&scenario, &source, &options, Some(&runtime)),
            Err(error) => {
                return Ok(Err(format!(
                    "run {index}'s scenario does not parse: {error}"
                )));
            }
        };
        summary.runs += 1;
        let tally = summary.by_fault.entry(planned.fault.name).or_default();
        tally.picked += 1;
        let chaos = report.chaos.unwrap_or_default();
        // Whether the fault struck: a fault of the fake's script (a server fault at a
        // frame, an MCP fault at a call) only when the fake journaled it applied; a DSH
        // fault by its own record (the runner notes one that never struck); a process
        // switch or an install fault always strikes.
        let in_fake_script = planned.at_frame.is_some() || planned.at_call.is_some();
        let struck = (!in_fake_script
            || chaos
                .faults_applied
                .iter()
                .any(|name| name == planned.fault.name))
            && !report
                .notes
                .iter()
                .any(|note| note.starts_with(crate::runner::DSH_FAULT_NOT_STRUCK));
        tally.struck += u64::from(struck);
        if let Some(slowest) = chaos.slowest
            && summary
                .slowest
                .is_none_or(|(s, _)| s.ratio() < slowest.ratio())
        {
            summary.slowest = Some((slowest, index));
        }
        let reasons = match report.verdict {
            Verdict::Fail(reasons) => reasons,
            _ => Vec::new(),
        };
        if settings.full_artifacts || !reasons.is_empty() {
            write_replay(&settings.out, seed, index, &planned.yaml, log)?;
        }
        if !reasons.is_empty() {
            tally.failed += 1;
            writeln!(
                log,
                "FAIL seed {seed} run {index}: {} on {}",
                planned.fault.name,
                planned.base.display()
            )?;
            for reason in &reasons {
                writeln!(log, "    {reason}")?;
            }
            writeln!(
                log,
                "    replay: cargo run -p dsh-sim -- chaos --seed {seed} --run {index}"
            )?;
            summary.failed.push(FailedRun { reasons });
        }
        if let Some(folder) = &report.artifacts {
            writeln!(log, "artefacts: {}", folder.display())?;
        }
        if summary.runs.is_multiple_of(500) {
            writeln!(
                log,
                "{} runs, {} failing, {:.1?}",
                summary.runs,
                summary.failed.len(),
                started.elapsed()
            )?;
        }
    }
    summary.elapsed = started.elapsed();
    runtime.shutdown_timeout(Duration::from_secs(5));
    Ok(Ok(summary))
}

/// Writes the replay of run `index` under `out`, and says where.
fn write_replay(
    out: &Path,
    seed: u64,
    index: u64,
    yaml: &str,
    log: &mut dyn Write,
) -> std::io::Result<()> {
    let path = out.join(format!("seed-{seed}-run-{index}.yaml"));
    let written = std::fs::create_dir_all(out).and_then(|()| std::fs::write(&path, yaml));
    match written {
        Ok(()) => {
            writeln!(
                log,
                "replay scenario: {} (copy it to scenarios/chaos/ to keep it as a regression test)",
                path.display()
            )
        }
        Err(error) => {
            writeln!(
                log,
                "could not write the replay {}: {error}",
                path.display()
            )
        }
    }
}

/// The session's figures, as `dsh-sim chaos` prints them at the end.
pub fn print_summary(
    summary: &ChaosSummary,
    seed: u64,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let secs = summary.elapsed.as_secs_f64().max(f64::EPSILON);
    writeln!(
        out,
        "chaos seed {seed}: {} runs in {:.1?} ({:.1} runs/s), {} failing run(s), {} violation(s)",
        summary.runs,
        summary.elapsed,
        summary.runs as f64 / secs,
        summary.failed.len(),
        summary.violations()
    )?;
    writeln!(
        out,
        "{:<30} {:>7} {:>7} {:>7}",
        "fault", "picked", "struck", "failed"
    )?;
    for (name, tally) in &summary.by_fault {
        writeln!(
            out,
            "{name:<30} {:>7} {:>7} {:>7}",
            tally.picked, tally.struck, tally.failed
        )?;
    }
    match summary.slowest {
        Some((slowest, index)) => {
            writeln!(
                out,
                "slowest terminal chunk: {:.3?} of its {:.3?} bound ({:.0}%), run {index}",
                slowest.after,
                slowest.bound,
                slowest.ratio() * 100.0
            )?;
        }
        None => {
            writeln!(out, "no terminal chunk was timed")?;
        }
    }
    Ok(())
}
