//! The command line's definitions: the subcommands and their options as clap parses them
//! (`Cli`, `Command`, `RunSettings`), and the `--server` value read as a command. What
//! each subcommand does with them is in `dispatch` and `run`. Nothing here is the
//! library's: only the binary parses a command line.

use std::path::PathBuf;

use antigravity_acp::ServerCommand;
use anyhow::bail;
use clap::{Parser, Subcommand};

/// DSH in miniature: the scenario runner for the antigravity-acp adapter.
#[derive(Debug, Parser)]
#[command(name = "dsh-sim", version)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run scenario files, or folders of them (recursively, *.yaml, sorted).
    Run {
        /// Scenario files or folders.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        settings: RunSettings,
    },
    /// Measure the adapter against the fake, each figure as a ratio to a floor measured
    /// in the same run (BENCHMARKS.md): tool rounds, parallel calls, warm and cold turns,
    /// streaming, memory, and (with --suite) the scenario suite. Use a release build.
    Bench(crate::commands::bench::BenchArgs),
    /// The smallest ACP agent on the official SDK, on stdio: the ACP floor of `bench`.
    #[command(hide = true)]
    BenchAgent,
    /// A bare rmcp client's calls to the MCP floor's echo server, from a process of its
    /// own: prints each duration in ms as a JSON list (for `bench`).
    #[command(hide = true)]
    BenchMcpClient {
        /// The echo server's MCP endpoint.
        #[arg(long)]
        url: String,
        /// What to time.
        #[arg(long, value_enum)]
        work: crate::bench::mcp_floor::ClientWork,
        /// Rounds (or first calls) to time, after a warm-up.
        #[arg(long)]
        rounds: usize,
        /// Concurrent calls per round.
        #[arg(long, default_value_t = 1)]
        width: usize,
        /// `kept` (a pooling client) or `fresh` (rmcp's default client).
        #[arg(long, value_enum)]
        connections: crate::bench::rounds::Connections,
    },
    /// Memory per turn in flight, in a fresh process: prints MB per turn (for `bench`).
    #[command(hide = true)]
    BenchMemory {
        /// Tool turns held in flight at once.
        #[arg(long, default_value_t = 8)]
        in_flight: usize,
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
    /// Measure what confining the server costs at start-up: a fresh provider's model
    /// discovery against the fake (spawn to `initialize` answered, plus one
    /// `session/new`), confined and unconfined in turn, medians.
    BenchConfinement {
        /// Runs of each kind.
        #[arg(long, default_value_t = 30)]
        runs: usize,
    },
    /// Install the pinned Antigravity server (or repair an install that fails its check),
    /// and print where it is and how it was verified. Exit code 0 only when a verified
    /// install is in place.
    Install(crate::commands::install::InstallArgs),
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
        #[arg(long, value_enum, default_value_t = crate::commands::bridge::ResultMode::Echo)]
        result: crate::commands::bridge::ResultMode,
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
        #[command(flatten)]
        confinement: ConfinementArgs,
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
    /// Seeded fault injection (claim B04): runs of the fast scenarios, each with one
    /// fault, judged by the chaos invariants. Exit code 0 only with zero violations.
    Chaos(crate::commands::chaos::ChaosArgs),
    /// What a run against a real agent showed (`run --agent … --keep-artifacts`), read
    /// from the journals under its artefacts folder: one `finding:` line per finding
    /// (MCP tool naming, native tools, permission requests, tool results, retries,
    /// models, the API key's shape).
    Findings {
        /// The run's `--artifacts` folder.
        artifacts: PathBuf,
    },
    /// Run the scripted fake server on stdio (the adapter launches this).
    FakeServer {
        /// The fake's own arguments (`--script FILE`, `--journal DIR`, ...).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}

/// The `run` subcommand's options.
#[derive(Debug, clap::Args)]
pub(crate) struct RunSettings {
    /// Run against this ACP server command ("<program> <args…>", split on
    /// whitespace) instead of the fake, or `installed`: the pinned build the adapter
    /// installs and checks itself (in the default cache). Scenarios marked `fake_only`
    /// are skipped, the rest judged on the relay's client-side journal; its model is not
    /// scripted (with `--agent`, this is the agent's command and its model is).
    #[arg(long, value_name = "COMMAND")]
    pub(crate) server: Option<String>,
    /// Run against a real ACP agent whose model is the scripted model API, which plays
    /// each scenario's `fake.turns` (scenarios marked `fake_only` are skipped):
    /// `gemini-cli` (the pinned `ci/real-agents` install, or `--server`'s command) or
    /// `antigravity` (1.3.0; `--server` names its command).
    #[arg(long, value_name = "AGENT")]
    pub(crate) agent: Option<crate::runner::real_agent::AgentKind>,
    /// Where failed scenarios leave their artefacts.
    #[arg(long, value_name = "DIR", default_value = "target/scenario-artifacts")]
    pub(crate) artifacts: PathBuf,
    /// Leave artefacts for passing scenarios too.
    #[arg(long)]
    pub(crate) keep_artifacts: bool,
    /// The bound on each scenario's chat, in seconds (default: 10 on the fake, 60
    /// with --server; a scenario's own `time_bound_secs` applies when longer).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub(crate) timeout: Option<u64>,
    /// Run only the scenarios whose path or name contains TEXT (ignoring case).
    #[arg(long, value_name = "TEXT")]
    pub(crate) filter: Option<String>,
    /// Run only the scenarios that failed the last time they ran (recorded in
    /// <artifacts>/last-failed.txt by every run).
    #[arg(long)]
    pub(crate) only_failed: bool,
    /// Write the run's Mermaid sequence diagram to FILE, passing or not (fenced for a
    /// `.md` name, bare otherwise). Needs exactly one scenario after selection.
    #[arg(long, value_name = "FILE")]
    pub(crate) diagram: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) confinement: ConfinementArgs,
    #[command(flatten)]
    pub(crate) real_loop: crate::commands::real_loop_args::RealLoopArgs,
}

/// How the server is confined by the kernel (`run` and `ask`).
#[derive(Debug, clap::Args)]
pub(crate) struct ConfinementArgs {
    /// `required` (refuse an unconfined server), `best_effort` (the default: confine
    /// where the kernel can) or `off`. A scenario's `dsh.adapter.confinement` wins.
    #[arg(long, value_name = "MODE")]
    pub(crate) confinement: Option<antigravity_acp::ConfinementMode>,
    /// A path the confined server may also read (and execute); repeatable. For a
    /// command whose files live outside its own directory (a Node or Python agent).
    #[arg(long = "allow-read", value_name = "PATH")]
    pub(crate) allow_read: Vec<PathBuf>,
    /// A path the confined server may also read and write; repeatable.
    #[arg(long = "allow-write", value_name = "PATH")]
    pub(crate) allow_write: Vec<PathBuf>,
}

impl ConfinementArgs {
    /// The runner's options.
    pub(crate) fn options(&self) -> crate::runner::confinement::ConfinementOptions {
        crate::runner::confinement::ConfinementOptions {
            mode: self.confinement,
            allow_read: self.allow_read.clone(),
            allow_write: self.allow_write.clone(),
        }
    }
}

/// The `--server` value as a command: its first word is the program, the rest its
/// arguments (split on whitespace).
pub(crate) fn parse_server_command(command: &str) -> anyhow::Result<ServerCommand> {
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
