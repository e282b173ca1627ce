//! `dsh-sim bench-confinement`: what confining the server costs at start-up. Each run is
//! a fresh provider's model discovery against the fake (spawn, `initialize` answered, one
//! `session/new`, whose answer on the fake takes microseconds), timed from the request to
//! the answer; runs alternate confined (`best_effort`, the kernel's Landlock) and
//! unconfined (`off`), in the same process, so both see the same machine. The median
//! difference is the cost: building the ruleset, a fork and exec instead of
//! `posix_spawn`, the two system calls in the child, and the kernel's checks on every
//! path the server opens while it starts.

use std::path::Path;
use std::time::{Duration, Instant};

use antigravity_acp::contract::LlmAdapter;
use antigravity_acp::{
    ADAPTER_ID, AdapterConfig, AntigravityProvider, ConfinementMode, ServerCommand,
};
use anyhow::{Context, bail};

use super::median::median_duration;

/// The medians of both kinds of start-up.
#[derive(Debug, Clone, Copy)]
pub struct StartupFigures {
    /// Confined runs, median.
    pub confined: Duration,
    /// Unconfined runs, median.
    pub unconfined: Duration,
    /// Runs of each.
    pub runs: usize,
}

/// Times `runs` confined and `runs` unconfined start-ups of the fake run from `program`.
pub async fn run_confinement_bench(program: &Path, runs: usize) -> anyhow::Result<StartupFigures> {
    if runs == 0 {
        bail!("--runs must be at least 1");
    }
    let work = tempfile::Builder::new()
        .prefix("dsh-sim-bench-confinement-")
        .tempdir()?;
    let home = work.path().join("gemini-home");
    std::fs::create_dir_all(&home)?;
    let (mut confined, mut unconfined) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        for mode in [ConfinementMode::BestEffort, ConfinementMode::Off] {
            let took = startup(program, work.path(), &home, mode).await?;
            match mode {
                ConfinementMode::Off => unconfined.push(took),
                _ => confined.push(took),
            }
        }
    }
    Ok(StartupFigures {
        confined: median_duration(&confined),
        unconfined: median_duration(&unconfined),
        runs,
    })
}

/// One fresh provider's discovery: spawn to `initialize` (and one `session/new`) answered.
async fn startup(
    program: &Path,
    work: &Path,
    home: &Path,
    mode: ConfinementMode,
) -> anyhow::Result<Duration> {
    let config = AdapterConfig {
        server: ServerCommand {
            program: program.to_owned(),
            args: vec!["fake-server".into()],
            env: vec![("GEMINI_HOME".into(), home.display().to_string())],
        }
        .into(),
        scratch_root: Some(work.to_owned()),
        confinement: mode,
        ..AdapterConfig::default()
    };
    let provider = AntigravityProvider::new(config);
    let started = Instant::now();
    let listed = provider.list_models(ADAPTER_ID).await;
    let took = started.elapsed();
    provider.dispose().await;
    listed
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("model discovery failed")?;
    Ok(took)
}
