//! What each subcommand does: [`main`] parses the command line, matches the subcommand to
//! its code and turns its outcome into the exit code; the small subcommands' glue
//! (`bench`, `ask`, `bridge`, `lint`, `fake-server`) is here too, `run`'s in `run`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Parser;

use crate::commands::cli::{Cli, Command, parse_server_command};
use crate::commands::run::run;

/// The `dsh-sim` binary: parses the command line, runs the subcommand to its end, and
/// says how the process exits.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::FakeServer { args } => run_fake(args),
        Command::Chaos(args) => {
            init_logging_by_default("off");
            crate::commands::chaos::run_chaos(args).unwrap_or_else(|error| {
                eprintln!("dsh-sim: {error:#}");
                ExitCode::from(2)
            })
        }
        Command::BenchConfinement { runs } => {
            init_logging();
            let figures = std::env::current_exe()
                .map_err(anyhow::Error::from)
                .and_then(|program| {
                    block_on(crate::bench::confinement::run_confinement_bench(
                        &program, runs,
                    ))
                });
            match figures {
                Ok(f) => {
                    println!(
                        "start-up, spawn to initialize answered (+ one session/new), {} runs each:",
                        f.runs
                    );
                    println!("  confined (Landlock)  median {:>10.3?}", f.confined);
                    println!("  unconfined           median {:>10.3?}", f.unconfined);
                    println!(
                        "  cost of confinement  {:>10.3?}",
                        f.confined.saturating_sub(f.unconfined)
                    );
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("dsh-sim: {error:#}");
                    ExitCode::from(2)
                }
            }
        }
        Command::BenchInstall {
            server_mib,
            harness_mib,
            runs,
        } => {
            init_logging();
            let figures = block_on(crate::bench::install::run_install_bench(
                server_mib,
                harness_mib,
                runs,
            ));
            match figures {
                Ok(figures) => {
                    println!(
                        "install of a {server_mib} MiB server and a {harness_mib} MiB harness:"
                    );
                    for figure in figures {
                        println!(
                            "{:<60} {:>4} runs  median {:>10.3?}",
                            figure.name, figure.runs, figure.median
                        );
                    }
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("dsh-sim: {error:#}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Tap { journal, command } => {
            let mut command = command.into_iter();
            match command.next() {
                Some(program) => {
                    crate::runner::client_tap::run_tap(&journal, program, command.collect())
                }
                None => ExitCode::from(2),
            }
        }
        Command::Install(args) => {
            init_logging();
            let outcome = block_on(crate::commands::install::run_install(args));
            match outcome {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(error) => {
                    eprintln!("dsh-sim: {error:#}");
                    ExitCode::from(2)
                }
            }
        }
        Command::New {
            area_name,
            from,
            root,
        } => match crate::commands::new::create(&root, &area_name, from.as_deref()) {
            Ok(path) => {
                let path = path.display();
                println!("created {path}");
                println!("edit it (scenarios/README.md documents every key), then:");
                println!("    cargo run -p dsh-sim -- lint {path}");
                println!("    cargo run -p dsh-sim -- run {path}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("dsh-sim: {error}");
                ExitCode::from(2)
            }
        },
        Command::Lint { paths } => match lint(&paths) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::FAILURE,
            Err(error) => {
                eprintln!("dsh-sim: {error:#}");
                ExitCode::from(2)
            }
        },
        Command::Bridge { tools, result } => match bridge(&tools, result) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("dsh-sim: {error:#}");
                ExitCode::from(2)
            }
        },
        Command::Ask {
            prompt,
            server,
            model,
            tools,
            script,
            confinement,
        } => {
            init_logging();
            match ask(
                prompt,
                &server,
                model,
                tools.as_deref(),
                script,
                &confinement,
            ) {
                Ok(_) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("dsh-sim: {error:#}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Findings { artifacts } => {
            match crate::commands::findings::run_findings(&artifacts) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("dsh-sim: {error:#}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Schema => {
            print!("{}", crate::scenario::scenario_schema_json());
            ExitCode::SUCCESS
        }
        Command::Bench(args) => {
            // The suite's faults make the adapter's dependencies warn on every run.
            init_logging_by_default("off");
            crate::commands::bench::bench(args)
        }
        Command::BenchMemory { in_flight } => {
            init_logging();
            let held = std::env::current_exe()
                .map_err(anyhow::Error::from)
                .and_then(|program| {
                    block_on(crate::bench::memory::held_per_turn(&program, in_flight))
                });
            match held {
                Ok(mb) => {
                    println!("{mb:.4}");
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("dsh-sim: {error:#}");
                    ExitCode::from(2)
                }
            }
        }
        Command::BenchMcpClient {
            url,
            work,
            rounds,
            width,
            connections,
        } => {
            let measured = block_on(crate::bench::mcp_floor::client_work(
                &url,
                work,
                rounds,
                width,
                connections,
            ));
            match measured.and_then(|ms| Ok(serde_json::to_string(&ms)?)) {
                Ok(json) => {
                    println!("{json}");
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("dsh-sim: {error:#}");
                    ExitCode::from(2)
                }
            }
        }
        Command::BenchAgent => match block_on(crate::bench::bare_acp::serve_bench_agent()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("dsh-sim: {error:#}");
                ExitCode::from(2)
            }
        },
        Command::Run { paths, settings } => {
            init_logging();
            match run(&paths, &settings) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(error) => {
                    eprintln!("dsh-sim: {error:#}");
                    ExitCode::from(2)
                }
            }
        }
    }
}

/// Runs `work` to completion on a fresh multi-threaded runtime.
fn block_on<T>(work: impl Future<Output = anyhow::Result<T>>) -> anyhow::Result<T> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|runtime| runtime.block_on(work))
}

/// Logs go to stderr only, filtered by `RUST_LOG` (default: warnings). Every event of
/// the adapter (any level) also passes the chaos secret watch (`runner::judge::chaos::watch`), which
/// costs one atomic load per event while no chaos run is watched.
fn init_logging() {
    init_logging_by_default("warn");
}

/// [`init_logging`] with `default` when `RUST_LOG` is unset (chaos: `off`, as faults make
/// the adapter's dependencies warn on every run).
fn init_logging_by_default(default: &str) {
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let watched = crate::runner::judge::chaos::watch::watched_targets();
    let installed = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(filter),
        )
        .with(crate::runner::judge::chaos::watch::SecretWatchLayer::new().with_filter(watched))
        .try_init();
    if installed.is_ok() {
        crate::runner::judge::chaos::watch::mark_installed();
    }
}

fn ask(
    prompt: String,
    server: &str,
    model: Option<String>,
    tools: Option<&std::path::Path>,
    script: Option<PathBuf>,
    confinement: &crate::commands::cli::ConfinementArgs,
) -> anyhow::Result<antigravity_acp::contract::FinishReason> {
    use crate::commands::ask::{AskArgs, AskServer, run_ask};
    let server = match server {
        "fake" => AskServer::Fake {
            program: std::env::current_exe().context("cannot find the dsh-sim binary itself")?,
            script,
        },
        "installed" => AskServer::Installed,
        command => AskServer::Command(parse_server_command(command)?),
    };
    let tools = match tools {
        Some(path) => crate::commands::bridge::load_tools(path)?,
        None => Vec::new(),
    };
    let scratch = tempfile::Builder::new()
        .prefix("dsh-sim-ask-")
        .tempdir()
        .context("cannot make a scratch folder")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start a tokio runtime")?;
    let args = AskArgs {
        prompt,
        server,
        model,
        tools,
        confinement: confinement.options(),
    };
    let mut out = std::io::stdout();
    let mut notes = std::io::stderr();
    Ok(runtime.block_on(run_ask(args, scratch.path(), &mut out, &mut notes))?)
}

fn bridge(
    tools: &std::path::Path,
    mode: crate::commands::bridge::ResultMode,
) -> anyhow::Result<()> {
    let tools = crate::commands::bridge::load_tools(tools)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start a tokio runtime")?;
    runtime.block_on(crate::commands::bridge::serve_until_stdin_closes(
        &tools,
        mode,
        &mut std::io::stdout(),
    ))?;
    Ok(())
}

fn lint(paths: &[PathBuf]) -> anyhow::Result<bool> {
    let files = crate::runner::discover::scenario_files(paths)?;
    if files.is_empty() {
        bail!("no scenario files found");
    }
    let problems: Vec<String> = files
        .iter()
        .flat_map(|file| crate::commands::lint::lint_file(file))
        .collect();
    for problem in &problems {
        println!("{problem}");
    }
    println!("{} files, {} problems", files.len(), problems.len());
    Ok(problems.is_empty())
}

/// Runs the fake on stdio with its own arguments (it builds its own runtime).
fn run_fake(args: Vec<std::ffi::OsString>) -> ExitCode {
    fake_antigravity::main_with_args(args)
}
