//! `dsh-sim`: runs YAML scenarios against the `antigravity-acp` adapter
//! (`dsh-sim run PATH...`), and hosts the scripted fake server
//! (`dsh-sim fake-server ARGS...`) that the adapter launches during a run. It also starts
//! scenarios (`new`), checks them without running (`lint`), prints their JSON Schema
//! (`schema`), serves the adapter's real MCP bridge on its own (`bridge`) and measures the
//! adapter (`bench`).

use std::path::PathBuf;
use std::process::ExitCode;

use antigravity_acp::ServerCommand;
use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use dsh_sim::runner::selection;
use dsh_sim::runner::{RunnerOptions, ScenarioReport, ServerChoice, Verdict, run_file};

/// DSH in miniature: the scenario runner for the antigravity-acp adapter.
#[derive(Debug, Parser)]
#[command(name = "dsh-sim", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run scenario files, or folders of them (recursively, *.yaml, sorted).
    Run {
        /// Scenario files or folders.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        settings: RunSettings,
    },
    /// Measure the adapter against the fake: text-turn latency, tool-round latency inside
    /// one prompt, streaming throughput. Use a release build for meaningful figures.
    Bench {
        /// Warm text turns to time (on a pooled process; three cold turns are timed too).
        #[arg(long, default_value_t = 30)]
        turns: usize,
        /// Sequential tool rounds inside one prompt.
        #[arg(long, default_value_t = 300)]
        rounds: usize,
        /// Text chunks streamed in one turn.
        #[arg(long, default_value_t = 20_000)]
        chunks: usize,
    },
    /// Measure the installer on an archive the size of the real one: the first install,
    /// the launch-time check, a check that must hash the server, a full verify.
    BenchInstall {
        /// The server member's size in MiB (the real 1.3.0 linux-x86_64 one: 884 MiB).
        #[arg(long, default_value_t = 884)]
        server_mib: usize,
        /// The harness member's size in MiB (the real one: 124 MiB).
        #[arg(long, default_value_t = 124)]
        harness_mib: usize,
        /// Runs of each check.
        #[arg(long, default_value_t = 20)]
        runs: usize,
    },
    /// Install the pinned Antigravity server (or repair an install that fails its check),
    /// and print where it is and how it was verified. Exit code 0 only when a verified
    /// install is in place.
    Install(dsh_sim::commands::install_cli::InstallArgs),
    /// Start a scenario at <root>/AREA/NAME.yaml: a commented skeleton that passes as it
    /// is, or a copy of another scenario; `covers: []` either way. Never overwrites.
    New {
        /// AREA/NAME, both lowercase snake_case (e.g. tool_calls/denial_after_retry).
        area_name: String,
        /// Copy this scenario instead of the skeleton.
        #[arg(long, value_name = "EXISTING")]
        from: Option<PathBuf>,
        /// The scenarios folder.
        #[arg(long, value_name = "DIR", default_value = "scenarios")]
        root: PathBuf,
    },
    /// Check scenario files without running them: the schema line, strict parsing, and
    /// the claims they cover against CLAIMS.md. Prints `file:line:column: message` per
    /// problem; exits 1 when there is any.
    Lint {
        /// Scenario files or folders.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Start the adapter's real MCP bridge (as a turn does) with the tools of FILE.json,
    /// print `{"url","token","tools":[{"name","mcp_name"}]}` on one line, answer every
    /// valid call itself, and close the bridge and exit when stdin closes.
    Bridge {
        /// A JSON array of tools: `{"name", "description", "input_schema"}`.
        #[arg(long, value_name = "FILE.json")]
        tools: PathBuf,
        /// How each valid call is answered: `echo` (its arguments as JSON text) or
        /// `deny` (isError "permission denied by DSH").
        #[arg(long, value_enum, default_value_t = dsh_sim::commands::bridge_session::ResultMode::Echo)]
        result: dsh_sim::commands::bridge_session::ResultMode,
    },
    /// Print the scenario format's JSON Schema (committed as scenarios/scenario.schema.json:
    /// `cargo run -p dsh-sim -- schema > scenarios/scenario.schema.json`).
    Schema,
    /// One chat turn through the adapter, printed as it streams (text on stdout, the rest
    /// on stderr), to try a server by hand. Exit code 0 on a finish, 1 on an error.
    Ask {
        /// The user's message.
        prompt: String,
        /// `fake` (the scripted fake; see --script), `installed` (the pinned 1.3.0
        /// build, installed and verified) or an ACP server command ("<program> <args…>").
        #[arg(long, value_name = "fake|installed|CMD", default_value = "fake")]
        server: String,
        /// A model id without the adapter prefix (e.g. gemini-3.8-flash-low); default:
        /// the server's own default.
        #[arg(long, value_name = "ID")]
        model: Option<String>,
        /// Tools to offer: a JSON array of `{name, description, input_schema}`; each call
        /// is answered with its own arguments.
        #[arg(long, value_name = "FILE.json")]
        tools: Option<PathBuf>,
        /// The fake's script (with --server fake).
        #[arg(long, value_name = "FILE")]
        script: Option<PathBuf>,
    },
    /// Relay an ACP server on stdio and journal every frame (the runner launches servers
    /// given with `run --server` through this: the client-side journal).
    Tap {
        /// Where the journal file goes.
        #[arg(long, value_name = "DIR")]
        journal: PathBuf,
        /// The server command.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        command: Vec<std::ffi::OsString>,
    },
    /// Run the scripted fake server on stdio (the adapter launches this).
    FakeServer {
        /// The fake's own arguments (`--script FILE`, `--journal DIR`, ...).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::FakeServer { args } => run_fake(args),
        Command::BenchInstall {
            server_mib,
            harness_mib,
            runs,
        } => {
            init_logging();
            let figures = block_on(dsh_sim::commands::bench_install::run_install_bench(
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
                    dsh_sim::runner::client_tap::run_tap(&journal, program, command.collect())
                }
                None => ExitCode::from(2),
            }
        }
        Command::Install(args) => {
            init_logging();
            let outcome = block_on(dsh_sim::commands::install_cli::run_install(args));
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
        } => match dsh_sim::commands::scaffold::create(&root, &area_name, from.as_deref()) {
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
        } => {
            init_logging();
            match ask(prompt, &server, model, tools.as_deref(), script) {
                Ok(_) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("dsh-sim: {error:#}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Schema => {
            print!("{}", dsh_sim::scenario::scenario_schema_json());
            ExitCode::SUCCESS
        }
        Command::Bench {
            turns,
            rounds,
            chunks,
        } => {
            init_logging();
            let settings = dsh_sim::commands::bench::BenchSettings {
                turns,
                rounds,
                chunks,
            };
            match bench(settings) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("dsh-sim: {error:#}");
                    ExitCode::from(2)
                }
            }
        }
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

/// Logs go to stderr only, filtered by `RUST_LOG` (default: warnings).
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

fn bench(settings: dsh_sim::commands::bench::BenchSettings) -> anyhow::Result<()> {
    let program = std::env::current_exe().context("cannot find the dsh-sim binary itself")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start a tokio runtime")?;
    let report = runtime.block_on(dsh_sim::commands::bench::run_bench(&program, settings))?;
    println!(
        "{:<52} {:>6} {:>10} {:>10} {:>10}",
        "benchmark", "n", "p50", "p99", "max"
    );
    for sample in &report.samples {
        println!(
            "{:<52} {:>6} {:>10.3?} {:>10.3?} {:>10.3?}",
            sample.name,
            sample.durations.len(),
            sample.quantile(0.5),
            sample.quantile(0.99),
            sample.quantile(1.0),
        );
    }
    println!(
        "warm/cold text turn (p50): {:.4} (goal: under 0.10)",
        report.warm_cold_ratio
    );
    println!(
        "streaming throughput: {:.0} parts/s ({} server chunks)",
        report.parts_per_second, report.chunks
    );
    if let Some(kib) = report.peak_rss_kib {
        println!(
            "peak RSS of the DSH+adapter process: {:.1} MiB",
            kib as f64 / 1024.0
        );
    }
    Ok(())
}

fn ask(
    prompt: String,
    server: &str,
    model: Option<String>,
    tools: Option<&std::path::Path>,
    script: Option<PathBuf>,
) -> anyhow::Result<antigravity_acp::contract::FinishReason> {
    use dsh_sim::commands::ask::{AskArgs, AskServer, run_ask};
    let server = match server {
        "fake" => AskServer::Fake {
            program: std::env::current_exe().context("cannot find the dsh-sim binary itself")?,
            script,
        },
        "installed" => AskServer::Installed,
        command => AskServer::Command(parse_server_command(command)?),
    };
    let tools = match tools {
        Some(path) => dsh_sim::commands::bridge_session::load_tools(path)?,
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
    };
    let mut out = std::io::stdout();
    let mut notes = std::io::stderr();
    Ok(runtime.block_on(run_ask(args, scratch.path(), &mut out, &mut notes))?)
}

/// The default bound on a scenario's chat against a real server (`--server`).
const REAL_SERVER_TIME_BOUND_SECS: u64 = 60;

/// The `run` subcommand's options.
#[derive(Debug, clap::Args)]
struct RunSettings {
    /// Run against this ACP server command ("<program> <args…>", split on
    /// whitespace) instead of the fake, or `installed`: the pinned build the adapter
    /// installs and checks itself (in the default cache). Journal-based wire checks
    /// are skipped and scenarios marked `real_server: false` are skipped.
    #[arg(long, value_name = "COMMAND")]
    server: Option<String>,
    /// Where failed scenarios leave their artefacts.
    #[arg(long, value_name = "DIR", default_value = "target/scenario-artifacts")]
    artifacts: PathBuf,
    /// Leave artefacts for passing scenarios too.
    #[arg(long)]
    keep_artifacts: bool,
    /// The bound on each scenario's chat, in seconds (default: 10 on the fake, 60
    /// with --server; a scenario's own `time_bound_secs` applies when longer).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: Option<u64>,
    /// Run only the scenarios whose path or name contains TEXT (ignoring case).
    #[arg(long, value_name = "TEXT")]
    filter: Option<String>,
    /// Run only the scenarios that failed the last time they ran (recorded in
    /// <artifacts>/last-failed.txt by every run).
    #[arg(long)]
    only_failed: bool,
    /// Write the run's Mermaid sequence diagram to FILE, passing or not (fenced for a
    /// `.md` name, bare otherwise). Needs exactly one scenario after selection.
    #[arg(long, value_name = "FILE")]
    diagram: Option<PathBuf>,
}

fn run(paths: &[PathBuf], settings: &RunSettings) -> anyhow::Result<bool> {
    let mut options = RunnerOptions::with_fake(
        std::env::current_exe().context("cannot find the dsh-sim binary itself")?,
    );
    match settings.server.as_deref() {
        None => {}
        Some("installed") => {
            options.server =
                ServerChoice::Installed(antigravity_acp::install::InstallOptions::default());
        }
        Some(command) => {
            options.server = ServerChoice::Command(parse_server_command(command)?);
            options.tap_program =
                Some(std::env::current_exe().context("cannot find the dsh-sim binary itself")?);
        }
    }
    options.artifacts_root = Some(settings.artifacts.clone());
    options.keep_passing_artifacts = settings.keep_artifacts;
    options.time_bound = match (settings.timeout, &settings.server) {
        (Some(secs), _) => std::time::Duration::from_secs(secs),
        // A real server starts and answers far slower than the fake.
        (None, Some(_)) => std::time::Duration::from_secs(REAL_SERVER_TIME_BOUND_SECS),
        (None, None) => dsh_sim::runner::DEFAULT_TIME_BOUND,
    };
    let mut files = dsh_sim::runner::discover::scenario_files(paths)?;
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

fn bridge(
    tools: &std::path::Path,
    mode: dsh_sim::commands::bridge_session::ResultMode,
) -> anyhow::Result<()> {
    let tools = dsh_sim::commands::bridge_session::load_tools(tools)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start a tokio runtime")?;
    runtime.block_on(dsh_sim::commands::bridge_session::serve_until_stdin_closes(
        &tools,
        mode,
        &mut std::io::stdout(),
    ))?;
    Ok(())
}

fn lint(paths: &[PathBuf]) -> anyhow::Result<bool> {
    let files = dsh_sim::runner::discover::scenario_files(paths)?;
    if files.is_empty() {
        bail!("no scenario files found");
    }
    let problems: Vec<String> = files
        .iter()
        .flat_map(|file| dsh_sim::commands::lint::lint_file(file))
        .collect();
    for problem in &problems {
        println!("{problem}");
    }
    println!("{} files, {} problems", files.len(), problems.len());
    Ok(problems.is_empty())
}

fn parse_server_command(command: &str) -> anyhow::Result<ServerCommand> {
    let mut words = command.split_whitespace().map(str::to_owned);
    let Some(program) = words.next() else {
        bail!("--server needs a command");
    };
    Ok(ServerCommand {
        program: program.into(),
        args: words.collect(),
        env: Vec::new(),
    })
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

/// Runs the fake on stdio with its own arguments (it builds its own runtime).
fn run_fake(args: Vec<std::ffi::OsString>) -> ExitCode {
    fake_antigravity::main_with_args(args)
}
