//! `dsh-sim chaos [--seed N] [--runs M] [--scenarios PATHS] [--faults LIST] [--run K]`:
//! the glue between the command line and [`crate::chaos::driver`]: the seed (given, or
//! fresh from the clock, printed either way), the bases, the fault rows, the session, the
//! summary, and the exit code (0 only with zero violations).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, anyhow};

use crate::chaos::catalogue::select;
use crate::chaos::driver::{ChaosSettings, print_summary, run_session};
use crate::chaos::plan::{default_paths, load_bases};

/// The `chaos` subcommand's options.
#[derive(Debug, clap::Args)]
pub struct ChaosArgs {
    /// The seed (default: fresh from the clock; printed, so a run can be replayed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// How many runs (indexes 0..M).
    #[arg(long, default_value_t = 200)]
    pub runs: u64,
    /// Base scenarios: files or folders (default: the fast fake-only areas of
    /// `scenarios/`).
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub scenarios: Vec<PathBuf>,
    /// Only these faults or families (comma-separated names, e.g. `server` or
    /// `stall,split_frame`).
    #[arg(long, value_delimiter = ',')]
    pub faults: Vec<String>,
    /// Replay run K alone, with full artefacts, and write its replay scenario.
    #[arg(long, value_name = "K")]
    pub run: Option<u64>,
    /// Where replays and artefacts go.
    #[arg(long, value_name = "DIR", default_value = "target/chaos")]
    pub out: PathBuf,
}

/// Runs the session the arguments describe.
pub fn run_chaos(args: ChaosArgs) -> anyhow::Result<ExitCode> {
    let seed = args.seed.unwrap_or_else(fresh_seed);
    let paths = if args.scenarios.is_empty() {
        default_paths(&PathBuf::from("scenarios"))
    } else {
        args.scenarios.clone()
    };
    let bases = load_bases(&paths).map_err(|e| anyhow!(e))?;
    let rows = select(&args.faults).map_err(|e| anyhow!(e))?;
    let runs = match args.run {
        Some(k) => k..k + 1,
        None => 0..args.runs,
    };
    eprintln!(
        "chaos seed {seed}: {} run(s) over {} base scenario(s) and {} fault(s)",
        runs.end - runs.start,
        bases.len(),
        rows.len()
    );
    let settings = ChaosSettings {
        seed,
        runs,
        bases,
        rows,
        out: args.out,
        full_artifacts: args.run.is_some(),
    };
    let program = std::env::current_exe().context("cannot find the dsh-sim binary itself")?;
    let summary =
        run_session(&settings, &program, &mut std::io::stderr()).map_err(|e| anyhow!(e))?;
    print_summary(&summary, seed, &mut std::io::stdout())?;
    Ok(if summary.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// A seed from the clock's nanoseconds.
fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default()
}
