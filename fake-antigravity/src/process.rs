//! The fake as a process: parse the command line, load the script, open the journal,
//! build a tokio runtime, serve ACP on stdio until stdin closes (exit 0) or SIGTERM /
//! SIGINT arrives (exit 0), journaling `Started` first and `Exited` last. The script's
//! `process` switches delay the start, ignore SIGTERM, linger after stdin closes (until
//! killed), leave a child process behind, or leave a helper that dies late; its `faults`
//! go wrong on stdout ([`crate::faults::server_fault_writer`]).

pub mod abrupt_end;
pub mod cli;
pub mod glog;
pub mod helper;
pub mod queued_bytes;
pub mod serve;
pub mod slow_death;
pub mod stdio_pipes;
pub mod stdout_lines;
pub mod stop_signals;
pub mod version_override;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::faults::server_fault_writer;
use crate::journal::JournalEntry;
use crate::journal::writer::JournalWriter;
use crate::lifecycle::{LifecycleWatch, Watched};
use crate::process::cli::{CliAction, CliOptions, parse_args, usage, version_banner};
use crate::process::glog::Glog;
use crate::process::serve::{ServeOptions, resolve_gemini_home, serve};
use crate::process::stdio_pipes::{stdin_reader, stdout_writer};
use crate::process::stop_signals::{StopSignal, StopSignals};
use crate::script::Script;
use crate::script::file::load_script;
use crate::state::fake_agent::vanished_entries;
use crate::state::held_files::HeldConversationFiles;

/// The environment variables the journal's `Started` entry records when set.
pub const RECORDED_ENV: &[&str] = &[
    "GEMINI_HOME",
    "ANTIGRAVITY_HARNESS_PATH",
    "AGY_ACP_FORCE_FILE_STORAGE",
    "BROWSER",
];

/// Exit code for a refused command line or script.
const USAGE_ERROR: u8 = 2;

/// Runs the fake as a whole process and returns its exit code.
///
/// `args` are the arguments **after** the program name (as from
/// `std::env::args_os().skip(1)`), so the fake can run re-exec'd inside another binary's
/// subcommand. It builds its own tokio runtime: do not call it from inside one.
pub fn main_with_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    helper::remember_prefix(&args);
    let options = match parse_args(&args) {
        Ok(options) => options,
        Err(e) => {
            eprintln!(
                "FATAL Flags parsing error: {e}\nPass --helpshort or --helpfull to see help on flags."
            );
            return ExitCode::from(USAGE_ERROR);
        }
    };
    match options.action {
        CliAction::Version => {
            eprint!("{}", version_banner());
            return ExitCode::SUCCESS;
        }
        CliAction::Help => {
            eprint!("{}", usage());
            return ExitCode::SUCCESS;
        }
        CliAction::Helper {
            sleep_ms,
            after_stdin,
        } => return helper::run_helper(sleep_ms, after_stdin),
        CliAction::Serve => {}
    }
    let script = match &options.script {
        Some(path) => match load_script(path) {
            Ok(script) => script,
            Err(e) => {
                eprintln!("fake-antigravity: {e}");
                return ExitCode::from(USAGE_ERROR);
            }
        },
        None => Script::default(),
    };
    let journal = match &options.journal {
        Some(dir) => match JournalWriter::create_in(dir) {
            Ok(journal) => Some(Arc::new(journal)),
            Err(e) => {
                eprintln!("fake-antigravity: {e}");
                return ExitCode::from(USAGE_ERROR);
            }
        },
        None => None,
    };
    if let Some(journal) = &journal {
        journal.record(&started_entry(&args));
        // The server's stderr, next to its journal, for the runner's artefacts (B05).
        if let Err(e) = glog::copy_to(&journal.path().with_extension("stderr")) {
            eprintln!("fake-antigravity: cannot copy stderr next to the journal: {e}");
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("fake-antigravity: cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let held_files = Arc::new(HeldConversationFiles::default());
    // Held files are named relative to the home they were written in (only a set
    // `$GEMINI_HOME` is written into).
    let (home, writes_home) = resolve_gemini_home();
    let home = writes_home.then_some(home);
    let (code, reason) =
        runtime.block_on(run(&options, script, journal.clone(), held_files.clone()));
    // A fallback stdin reader may sit in a blocking read: do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    if let Some(journal) = &journal {
        // The last look at the held files, as late as the process can: a file removed
        // from now on is removed from a process about to be gone.
        for entry in vanished_entries(&held_files, home.as_deref(), "exit") {
            journal.record(&entry);
        }
        journal.record(&JournalEntry::Exited { reason });
    }
    code
}

fn started_entry(args: &[OsString]) -> JournalEntry {
    let env: BTreeMap<String, String> = RECORDED_ENV
        .iter()
        .filter_map(|name| {
            std::env::var_os(name).map(|v| ((*name).to_string(), v.to_string_lossy().into_owned()))
        })
        .collect();
    JournalEntry::Started {
        pid: std::process::id(),
        args: args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        env,
        env_names: {
            let mut names: Vec<String> = std::env::vars_os()
                .map(|(name, _)| name.to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        },
    }
}

/// Serves on stdio until stdin closes or a signal; returns the exit code and the reason.
async fn run(
    options: &CliOptions,
    script: Script,
    journal: Option<Arc<JournalWriter>>,
    held_files: Arc<HeldConversationFiles>,
) -> (ExitCode, String) {
    let log = Glog::new(options.debug);
    let (gemini_home, from_env) = resolve_gemini_home();
    log.info("main.py:80", "Starting AGY ACP Server...");
    let origin = if from_env {
        "from $GEMINI_HOME"
    } else {
        "default; $GEMINI_HOME is unset"
    };
    log.info(
        "main.py:81",
        &format!(
            "Gemini home resolved to {} ({origin})",
            gemini_home.display()
        ),
    );
    let script_name = options.script.as_ref().map_or_else(
        || "none (default profile)".to_string(),
        |p| p.display().to_string(),
    );
    log.info(
        "main.py:82",
        &format!("fake-antigravity: script {script_name}"),
    );
    let mut stop_signals = match StopSignals::watch() {
        Ok(watch) => watch,
        Err(e) => return (ExitCode::FAILURE, e),
    };
    let behaviour = script.process;
    if behaviour.spawn_lingering_child {
        spawn_lingering_child(journal.as_deref(), log);
    }
    if behaviour.slow_death_ms > 0 {
        slow_death::spawn_slow_death_helper(behaviour.slow_death_ms, journal.as_deref(), log);
    }
    if behaviour.stderr_flood_bytes > 0 {
        flood_stderr(behaviour.stderr_flood_bytes);
    }
    if behaviour.startup_delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(behaviour.startup_delay_ms)).await;
    }
    let lifecycle = LifecycleWatch::new(script.lifecycle);
    let stdout = server_fault_writer::with_faults(stdout_writer(), &script, journal.clone());
    let serve_options = ServeOptions {
        script,
        gemini_home,
        writes_home: from_env,
        journal,
        log,
        held_files,
    };
    let served = serve(
        serve_options,
        Watched::client_side(stdin_reader(), lifecycle.clone()),
        Watched::server_side(stdout, lifecycle.clone()),
    );
    tokio::pin!(served);
    let mut stdin_open = true;
    loop {
        tokio::select! {
            reason = lifecycle.exit_due() => return (ExitCode::SUCCESS, reason),
            served = &mut served, if stdin_open => match served {
                Ok(()) if behaviour.linger => {
                    log.info("main.py:121", "stdin closed; lingering");
                    stdin_open = false;
                }
                Ok(()) => return (ExitCode::SUCCESS, "stdin closed".to_string()),
                Err(e) => {
                    log.error("main.py:120", &e.to_string());
                    return (ExitCode::FAILURE, format!("error: {e}"));
                }
            },
            stop = stop_signals.recv() => match stop {
                StopSignal::Terminate if behaviour.ignore_sigterm => {
                    log.info("main.py:130", "SIGTERM received, ignored");
                }
                StopSignal::Terminate => {
                    log.info("main.py:130", "SIGTERM received, exiting");
                    return (ExitCode::SUCCESS, "signal".to_string());
                }
                StopSignal::Interrupt => {
                    log.info("main.py:131", "SIGINT received, exiting");
                    return (ExitCode::SUCCESS, "signal".to_string());
                }
            },
        }
    }
}

/// Writes `bytes` bytes of glog-style lines on stderr, blocking while the pipe is full.
fn flood_stderr(bytes: u64) {
    use std::io::Write;
    let line =
        b"I1201 00:00:00.000000 1 main.py:95] diagnostics flood: the server is very chatty\n";
    let mut stderr = std::io::stderr().lock();
    let mut written = 0u64;
    while written < bytes {
        // A closed stderr must not take the fake down.
        if stderr.write_all(line).is_err() {
            return;
        }
        written += line.len() as u64;
    }
}

/// Starts `sleep 3600` in the fake's process group and never waits for it.
fn spawn_lingering_child(journal: Option<&JournalWriter>, log: Glog) {
    let spawned = helper::helper_command(3_600_000, false).and_then(|mut command| {
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
    });
    match spawned {
        Ok(child) => {
            log.info(
                "main.py:90",
                &format!("harness child {} started", child.id()),
            );
            if let Some(journal) = journal {
                journal.record(&JournalEntry::ChildSpawned { pid: child.id() });
            }
            // Dropping a std Child neither kills nor reaps it: it outlives the fake.
            drop(child);
        }
        Err(e) => log.error("main.py:91", &format!("cannot start the child: {e}")),
    }
}
