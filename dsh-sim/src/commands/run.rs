//! `dsh-sim run PATH...`: finds the scenario files, chooses among them (`--filter`,
//! `--only-failed`), runs each with the runner, prints a report per scenario and the
//! totals, and records which failed for the next `--only-failed`.

use std::path::PathBuf;

use anyhow::{Context, bail};

use crate::commands::cli::{RunSettings, parse_server_command};
use crate::runner::selection;
use crate::runner::{RunnerOptions, ScenarioReport, ServerChoice, Verdict, run_file};

/// The default bound on a scenario's chat against a real server (`--server`).
const REAL_SERVER_TIME_BOUND_SECS: u64 = 60;

/// Runs the scenarios under `paths`; `Ok(true)` when none failed.
pub(crate) fn run(paths: &[PathBuf], settings: &RunSettings) -> anyhow::Result<bool> {
    let mut options = RunnerOptions::with_fake(
        std::env::current_exe().context("cannot find the dsh-sim binary itself")?,
    );
    match (settings.agent, settings.server.as_deref()) {
        (Some(kind), server) => {
            let server = server.map(parse_server_command).transpose()?;
            let agent = crate::runner::real_agent::RealAgent::new(kind, server)
                .map_err(anyhow::Error::msg)?;
            options.server = ServerChoice::Agent(agent);
            options.tap_program =
                Some(std::env::current_exe().context("cannot find the dsh-sim binary itself")?);
        }
        (None, None) => {}
        (None, Some("installed")) => {
            options.server =
                ServerChoice::Installed(antigravity_acp::install::InstallOptions::default());
        }
        (None, Some(command)) => {
            options.server = ServerChoice::Command(parse_server_command(command)?);
            options.tap_program =
                Some(std::env::current_exe().context("cannot find the dsh-sim binary itself")?);
        }
    }
    options.confinement = settings.confinement.options();
    options.real_loop = settings.real_loop.host();
    options.artifacts_root = Some(settings.artifacts.clone());
    options.keep_passing_artifacts = settings.keep_artifacts;
    let real = settings.server.is_some() || settings.agent.is_some();
    options.time_bound = match (settings.timeout, real) {
        (Some(secs), _) => std::time::Duration::from_secs(secs),
        // A real server starts and answers far slower than the fake.
        (None, true) => std::time::Duration::from_secs(REAL_SERVER_TIME_BOUND_SECS),
        (None, false) => crate::runner::DEFAULT_TIME_BOUND,
    };
    let mut files = crate::runner::discover::scenario_files(paths)?;
    if files.is_empty() {
        bail!("no scenario files found");
    }
    let record = settings.artifacts.join(selection::LAST_FAILED_FILE);
    if let Some(text) = &settings.filter {
        files = selection::filter(files, text);
        if files.is_empty() {
            bail!("no scenario's path or name contains {text:?}");
        }
    }
    if settings.only_failed {
        let failed_before = selection::last_failed(&record);
        files.retain(|file| failed_before.contains(file));
        if files.is_empty() {
            println!(
                "no scenario among these failed last time ({} lists none); nothing to run",
                record.display()
            );
            return Ok(true);
        }
    }
    if let Some(diagram) = &settings.diagram {
        if files.len() != 1 {
            bail!(
                "--diagram draws one run, but {} scenarios are selected; name one file or use --filter",
                files.len()
            );
        }
        options.diagram = Some(diagram.clone());
    }
    let (mut passed, mut failed, mut skipped, mut known) = (0usize, 0usize, 0usize, 0usize);
    let mut outcomes = Vec::with_capacity(files.len());
    for file in &files {
        let report = run_file(file, &options);
        print_report(&report);
        match report.verdict {
            Verdict::Pass => passed += 1,
            Verdict::Fail(_) => failed += 1,
            Verdict::Skip(_) => skipped += 1,
            Verdict::KnownFailure { .. } => known += 1,
        }
        outcomes.push((file.clone(), matches!(report.verdict, Verdict::Fail(_))));
    }
    if let Err(error) = selection::record_run(&record, &outcomes) {
        eprintln!(
            "dsh-sim: cannot record failures in {}: {error}",
            record.display()
        );
    }
    if let Some(diagram) = &settings.diagram {
        println!("diagram: {}", diagram.display());
    }
    if skipped > 0 {
        println!("({skipped} skipped)");
    }
    if known > 0 {
        println!("({known} known failures, XFAIL)");
    }
    println!("{passed} passed, {failed} failed");
    Ok(failed == 0)
}

fn print_report(report: &ScenarioReport) {
    let status = match report.verdict {
        Verdict::Pass => "PASS",
        Verdict::Fail(_) => "FAIL",
        Verdict::Skip(_) => "SKIP",
        Verdict::KnownFailure { .. } => "XFAIL",
    };
    println!(
        "{status}  {}  {}  ({:.2} s)",
        report.path.display(),
        report.name.as_deref().unwrap_or("?"),
        report.duration.as_secs_f64()
    );
    let indent = |text: &str| text.replace('\n', "\n      ");
    match &report.verdict {
        Verdict::Fail(reasons) => {
            for reason in reasons {
                println!("    - {}", indent(reason));
            }
        }
        Verdict::Skip(why) => println!("    - {why}"),
        Verdict::KnownFailure { reason, failures } => {
            println!("    known failure: {}", indent(reason));
            for failure in failures {
                println!("    - {}", indent(failure));
            }
        }
        Verdict::Pass => {}
    }
    for note in &report.notes {
        println!("    note: {note}");
    }
    if let Some(folder) = &report.artifacts {
        println!("    artefacts: {}", folder.display());
    }
}
