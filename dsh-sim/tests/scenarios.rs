#![allow(clippy::unwrap_used, clippy::expect_used)]
//! One test per scenario file under `../scenarios`, named by its path without `.yaml`
//! (e.g. `tool_calls/denial`), run through the library with this package's `dsh-sim`
//! binary as the fake server. Works under `cargo test` and `cargo nextest run`.
//!
//! With `DSH_SIM_FAIL_FAST` set (ci/mutants.sh sets it), every scenario after the first
//! failure fails at once without running: a broken adapter then fails the suite in
//! seconds instead of letting every scenario wait for its bound.

use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

use dsh_sim::runner::{RunnerOptions, Verdict, run_file};
use libtest_mimic::{Arguments, Failed, Trial};

fn main() {
    let mut args = Arguments::from_args();
    // One scenario at a time unless asked otherwise (`--test-threads N`): the leak checks
    // probe loopback ports a closed bridge used, and a scenario running beside it can be
    // handed the same port by the kernel, which makes a closed bridge look open. With
    // pooled servers outliving their turns this happened in about one full run in five.
    if args.test_threads.is_none() {
        args.test_threads = Some(1);
    }
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = package.join("../scenarios");
    let files = dsh_sim::runner::discover::scenario_files(std::slice::from_ref(&root))
        .expect("the scenarios folder is readable");
    let fake = PathBuf::from(env!("CARGO_BIN_EXE_dsh-sim"));
    // <target>/<profile>/dsh-sim → <target>/scenario-artifacts
    let artifacts = fake
        .parent()
        .and_then(Path::parent)
        .map(|target| target.join("scenario-artifacts"));
    let trials = files
        .into_iter()
        .map(|file| {
            let relative = file.strip_prefix(&root).unwrap_or(&file).to_owned();
            let name = relative
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let mut options = RunnerOptions::with_fake(fake.clone());
            options.artifacts_root.clone_from(&artifacts);
            // Relative to the package root (the test's cwd), so artefacts land under
            // scenario-artifacts/scenarios/<area>/<name>/.
            let path = Path::new("../scenarios").join(relative);
            // A scenario that cannot hold on this system is ignored (not run, never a
            // pass), its reason said once here.
            let scenario = dsh_sim::scenario::load(&file).ok();
            let not_here = scenario
                .as_ref()
                .and_then(|scenario| dsh_sim::scenario::not_run_here(scenario.platforms.as_ref()));
            if let Some(reason) = &not_here {
                eprintln!("{name}: {reason}");
            }
            let alone = scenario.is_some_and(|s| s.expect.chaos.is_some());
            Trial::test(name, move || {
                // The chaos invariants judge the whole process (its adapter tasks, panics
                // and log lines): such a scenario runs with no other beside it, whatever
                // `--test-threads` says; the others share the process.
                if alone {
                    let _alone = SHARED.write().unwrap_or_else(|e| e.into_inner());
                    run_trial(&path, &options)
                } else {
                    let _shared = SHARED.read().unwrap_or_else(|e| e.into_inner());
                    run_trial(&path, &options)
                }
            })
            .with_ignored_flag(not_here.is_some())
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

/// Scenarios share the process (read) unless their judges watch all of it (write).
static SHARED: RwLock<()> = RwLock::new(());

/// Set once a scenario failed (only read with `DSH_SIM_FAIL_FAST`).
static ONE_FAILED: AtomicBool = AtomicBool::new(false);

fn run_trial(path: &Path, options: &RunnerOptions) -> Result<(), Failed> {
    let fail_fast = std::env::var_os("DSH_SIM_FAIL_FAST").is_some();
    if fail_fast && ONE_FAILED.load(Ordering::SeqCst) {
        return Err("not run: an earlier scenario failed and DSH_SIM_FAIL_FAST is set".into());
    }
    let outcome = judge_trial(path, options);
    if outcome.is_err() {
        ONE_FAILED.store(true, Ordering::SeqCst);
    }
    outcome
}

fn judge_trial(path: &Path, options: &RunnerOptions) -> Result<(), Failed> {
    let report = run_file(path, options);
    match report.verdict {
        Verdict::Pass | Verdict::Skip(_) | Verdict::KnownFailure { .. } => Ok(()),
        Verdict::Fail(reasons) => {
            let mut message = reasons.join("\n");
            if let Some(folder) = report.artifacts {
                message.push_str(&format!("\nartefacts: {}", folder.display()));
            }
            Err(message.into())
        }
    }
}
