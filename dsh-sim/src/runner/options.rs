//! How scenarios are run, shared by the runner's two hosts (dsh-sim's loop in
//! `runner.rs`, DSH's own in [`crate::runner::real_loop`]): the server to launch, the
//! bounds, where artefacts go, which agent loop drives the chat ([`RealLoopHost`]), and
//! what one chat is driven with. Both hosts read these; neither imports the other's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use antigravity_acp::ServerCommand;

use crate::host::agent_loop::LoopLimits;
use crate::host::registry::HostRegistry;
use crate::runner::confinement::ConfinementOptions;
use crate::scenario::Scenario;

/// DSH's system prompt when a scenario sets none.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are DSH, a careful coding agent.";

/// Which server the adapter launches.
#[derive(Debug, Clone)]
pub enum ServerChoice {
    /// The scripted fake: `<program> fake-server --script FILE --journal DIR`, where
    /// `program` is a dsh-sim binary.
    Fake {
        /// The dsh-sim binary.
        program: PathBuf,
    },
    /// Any ACP server command, its model not scripted by the runner. Scenarios marked
    /// `fake_only` are skipped; what a scenario expects of the model's words holds only
    /// where the command answers as scripted (`Agent` scripts a real agent's model). With [`RunnerOptions::tap_program`], the server
    /// runs behind `dsh-sim tap`, whose client-side journal the wire checks are judged on
    /// (those on MCP traffic are skipped); without it, every wire check is skipped.
    Command(ServerCommand),
    /// The pinned build, installed (or checked and repaired) by the adapter itself, as
    /// DSH runs it; skipped and judged as for `Command`.
    Installed(antigravity_acp::install::InstallOptions),
    /// A real agent (`--agent`) with the scripted model API playing each scenario's
    /// `fake.turns`, behind the tap; judged on the client-side journal and the model API's
    /// journal. Scenarios marked `fake_only` are skipped.
    Agent(crate::runner::real_agent::RealAgent),
}

/// How scenarios are run.
#[derive(Debug, Clone)]
pub struct RunnerOptions {
    /// The server to launch.
    pub server: ServerChoice,
    /// Where failed scenarios leave artefacts (`None`: nowhere).
    pub artifacts_root: Option<PathBuf>,
    /// Leave artefacts for passing scenarios too.
    pub keep_passing_artifacts: bool,
    /// The bound on the whole chat, unless the scenario asks for a longer one
    /// (`time_bound_secs`). Short by default, so a broken adapter fails a scenario in
    /// seconds instead of hanging it ([`DEFAULT_TIME_BOUND`]).
    pub time_bound: Duration,
    /// The bound on the adapter's disposal.
    pub dispose_bound: Duration,
    /// The agent loop's bounds.
    pub limits: LoopLimits,
    /// Where to write the run's Mermaid sequence diagram, whatever the verdict (fake
    /// only; `None`: nowhere). Meant for one scenario: each run overwrites the file.
    pub diagram: Option<PathBuf>,
    /// A dsh-sim binary whose `tap` subcommand relays and journals a `Command` server
    /// (`None`: no client-side journal).
    pub tap_program: Option<PathBuf>,
    /// The server's confinement: `--confinement`, `--allow-read`, `--allow-write`.
    pub confinement: ConfinementOptions,
    /// Drive the chat through DSH's own agent loop in Node (`--real-loop`) instead of
    /// dsh-sim's; `None`: dsh-sim's loop.
    pub real_loop: Option<RealLoopHost>,
    /// The scenario's fault points were drawn (`dsh-sim chaos`): a scripted fault that
    /// never struck (of the fake, or `dsh.fault`) is a note, since a drawn point may lie
    /// past the run's end, and the session counts it as not struck. Otherwise (a scenario
    /// file, a replay run as one) such a fault fails the run: it proved nothing.
    pub faults_drawn: bool,
}

/// The default bound on one scenario's chat against the fake. The slowest scenario
/// (a 2.5 s tool racing two timeouts) takes under 3 s, so 10 s leaves room for a loaded
/// machine while a hanging adapter still fails the scenario in seconds. A scenario that
/// needs longer says so with `time_bound_secs`.
pub const DEFAULT_TIME_BOUND: Duration = Duration::from_secs(10);

/// The default bound on the adapter's disposal at the end of a scenario.
pub const DEFAULT_DISPOSE_BOUND: Duration = Duration::from_secs(10);

impl RunnerOptions {
    /// Defaults for running against the fake launched from `program`.
    pub fn with_fake(program: PathBuf) -> Self {
        Self {
            server: ServerChoice::Fake { program },
            artifacts_root: None,
            keep_passing_artifacts: false,
            time_bound: DEFAULT_TIME_BOUND,
            dispose_bound: DEFAULT_DISPOSE_BOUND,
            limits: LoopLimits::default(),
            diagram: None,
            tap_program: None,
            confinement: ConfinementOptions::default(),
            real_loop: None,
            faults_drawn: false,
        }
    }
}

/// How to start DSH's loop: `<node> <driver> SPEC`.
#[derive(Debug, Clone)]
pub struct RealLoopHost {
    /// The Node binary.
    pub node: PathBuf,
    /// `dsh-plugin/real-loop/driver.mjs`.
    pub driver: PathBuf,
}

impl RealLoopHost {
    /// `node` and the driver of this checkout.
    pub fn of_this_checkout(node: PathBuf) -> Self {
        Self {
            node,
            driver: Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../dsh-plugin/real-loop/driver.mjs"),
        }
    }
}

/// What one chat is driven with.
pub(crate) struct ChatRun<'a> {
    pub(crate) scenario: &'a Scenario,
    pub(crate) registry: &'a HostRegistry,
    pub(crate) options: &'a RunnerOptions,
    /// The fake's journal, when running the fake.
    pub(crate) journal_dir: Option<&'a Path>,
}

/// The bound on a scenario's chat: the runner's, or the scenario's own when it is longer
/// (a scenario never shortens the bound a slower server was given).
pub(crate) fn chat_bound(scenario: &Scenario, options: &RunnerOptions) -> Duration {
    scenario
        .time_bound_secs
        .map(Duration::from_secs)
        .map_or(options.time_bound, |own| own.max(options.time_bound))
}
