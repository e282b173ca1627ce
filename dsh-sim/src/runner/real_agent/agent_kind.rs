//! What differs per real agent: which agents there are ([`AgentKind`]) and how each starts
//! ([`RealAgent`], the pinned Gemini CLI by default), the agent's own tools and which of
//! them a `native` step calls, and what an agent cannot play of a scenario and why.

use std::path::{Path, PathBuf};

use antigravity_acp::ServerCommand;
use fake_antigravity::script::{DisabledToolsScript, NativeKind, Script, Step, StopScript};

use crate::scenario::{DshFault, Expectations, Scenario};

/// Which real agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentKind {
    /// Gemini CLI in ACP mode (`gemini --acp`), pinned in `ci/real-agents/package-lock.json`.
    GeminiCli,
    /// Google's Antigravity ACP server 1.3.0 (`--server` names its command).
    Antigravity,
}

/// A real agent and the command that starts it.
#[derive(Debug, Clone)]
pub struct RealAgent {
    /// Which agent.
    pub kind: AgentKind,
    /// Its ACP command.
    pub command: ServerCommand,
    /// Folders the confined agent must also read (its runtime and its package).
    pub reads: Vec<PathBuf>,
}

/// The native tools of Gemini CLI 0.61 as it declares them to the model.
pub const GEMINI_CLI_NATIVE_TOOLS: &[&str] = &[
    "update_topic",
    "list_directory",
    "read_file",
    "grep_search",
    "glob",
    "replace",
    "write_file",
    "web_fetch",
    "run_shell_command",
    "list_background_processes",
    "read_background_output",
    "google_web_search",
    "enter_plan_mode",
    "invoke_agent",
    "activate_skill",
    "save_memory",
    "write_todos",
];

impl AgentKind {
    /// The agent's name, as reports say it.
    pub fn name(self) -> &'static str {
        match self {
            Self::GeminiCli => "gemini-cli",
            Self::Antigravity => "antigravity 1.3.0",
        }
    }

    /// The agent's own tool a `native` step of this kind calls, and its arguments.
    pub fn native_call(
        self,
        tool: &str,
        kind: NativeKind,
        path: Option<&str>,
        content: &str,
    ) -> (String, serde_json::Value) {
        let path = path.unwrap_or("notes.txt");
        match self {
            // 1.3.0 declares its tools under the names docs/antigravity-1.3.0.md §21 records,
            // which the scenario's step names.
            Self::Antigravity => (tool.to_owned(), serde_json::json!({ "path": path })),
            Self::GeminiCli => match kind {
                NativeKind::Read | NativeKind::Search => (
                    "read_file".to_owned(),
                    serde_json::json!({ "file_path": path }),
                ),
                NativeKind::Edit | NativeKind::Delete | NativeKind::Move => (
                    "write_file".to_owned(),
                    serde_json::json!({ "file_path": path, "content": content }),
                ),
                NativeKind::Fetch => (
                    "web_fetch".to_owned(),
                    serde_json::json!({ "prompt": "https://example.invalid/" }),
                ),
                // A command Gemini CLI does not count as read-only, so it asks first.
                _ => (
                    "run_shell_command".to_owned(),
                    serde_json::json!({ "command": "touch dsh-sim-native-ran" }),
                ),
            },
        }
    }

    /// `expect` as DSH sees it through this agent: the models listed and the context
    /// window are the agent's own (not the fake's `models` and usage), so they are left to
    /// the fake; Gemini CLI shows a thought that has no `**subject**` line (the scripted
    /// model's thoughts have none) as `****` and a line break before the thought, so an
    /// expected reasoning block gains that prefix.
    pub fn as_shown(self, expect: &Expectations) -> Expectations {
        let mut shown = expect.clone();
        shown.models_listed = None;
        shown.context_window = None;
        if self == Self::GeminiCli
            && let Some(streams) = shown.streams.as_mut()
        {
            for line in streams.iter_mut().flatten() {
                if let Some((head, thought)) = line.split_once(": ")
                    && head.starts_with("reasoning#")
                {
                    *line = format!("{head}: ****\n{thought}");
                }
            }
        }
        shown
    }

    /// Why this agent cannot play `scenario`, when only the agent stands in the way.
    pub fn cannot_play(self, scenario: &Scenario) -> Option<String> {
        let named = scenario
            .dsh
            .model
            .as_deref()
            .is_some_and(|model| !model.ends_with("/server-default"));
        let refused_before_seen = runs_natives(&scenario.fake)
            && scenario
                .fake
                .turns
                .iter()
                .flat_map(|turn| &turn.steps)
                .any(|step| match step {
                    Step::Native(native) => {
                        let outside = native.path.as_deref().is_some_and(|path| {
                            Path::new(path).is_absolute()
                                || path.starts_with("{workspace}")
                                || path.contains("..")
                        });
                        outside && (native.ask || native.kind == NativeKind::Read)
                    }
                    _ => false,
                });
        let stops_early = scenario
            .fake
            .turns
            .iter()
            .any(|turn| turn.stop != StopScript::EndTurn);
        let one_round_of_two = matches!(scenario.dsh.fault, Some(DshFault::HistoryReorderResults));
        match self {
            Self::GeminiCli if stops_early => Some(
                "a turn the model stops at its token limit or refuses: gemini-cli ends it with \
                 `end_turn` all the same, so the adapter is told nothing else happened"
                    .to_owned(),
            ),
            Self::GeminiCli if one_round_of_two => Some(
                "needs two tool results in one continuation: gemini-cli runs a model's \
                 parallel calls one after another, so DSH holds one result at a time"
                    .to_owned(),
            ),
            Self::GeminiCli if named => Some(
                "names a model, and gemini-cli offers no `model` config option to select it \
                 through (the adapter selects models only that way)"
                    .to_owned(),
            ),
            Self::GeminiCli if refused_before_seen => Some(
                "a native read, or an asked write, of a path outside the agent's workspace: \
                 gemini-cli refuses such a path before it announces the read or asks, so the \
                 attempt 1.3.0 makes never reaches the adapter"
                    .to_owned(),
            ),
            _ => None,
        }
    }
}

/// Where the pinned Gemini CLI is installed (`npm ci --prefix ci/real-agents`).
pub fn pinned_gemini_cli() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ci/real-agents/node_modules/@google/gemini-cli/bundle/gemini.js")
}

impl RealAgent {
    /// The agent `kind`, started by `server` (`<program> <args…>`) or, for Gemini CLI, by
    /// the pinned install run with `node` from `PATH`.
    pub fn new(kind: AgentKind, server: Option<ServerCommand>) -> Result<Self, String> {
        let command = match (kind, server) {
            (_, Some(command)) => command,
            (AgentKind::GeminiCli, None) => {
                let bundle = pinned_gemini_cli();
                if !bundle.is_file() {
                    return Err(format!(
                        "no Gemini CLI at {}: run `npm ci --prefix ci/real-agents` (or name \
                         the agent's command with --server)",
                        bundle.display()
                    ));
                }
                ServerCommand {
                    program: PathBuf::from("node"),
                    args: vec![bundle.display().to_string(), "--acp".to_owned()],
                    env: Vec::new(),
                }
            }
            (AgentKind::Antigravity, None) => {
                return Err(
                    "--agent antigravity needs --server naming the build's command".to_owned(),
                );
            }
        };
        let mut reads = Vec::new();
        for arg in &command.args {
            let path = Path::new(arg);
            if path.is_absolute() && path.exists() {
                // A script the program runs (Gemini CLI's bundle): the whole install it
                // loads modules from.
                let install = path
                    .ancestors()
                    .find(|folder| folder.ends_with("node_modules"))
                    .unwrap_or(path);
                reads.push(install.to_path_buf());
            }
        }
        Ok(Self {
            kind,
            command,
            reads,
        })
    }
}

/// Whether the scenario has the agent's own tools run (a build that ignores the
/// disabling): then the runner leaves them on.
pub fn runs_natives(fake: &Script) -> bool {
    fake.disabled_tools == DisabledToolsScript::Ignore
        && fake
            .turns
            .iter()
            .flat_map(|turn| &turn.steps)
            .any(|step| matches!(step, Step::Native(_)))
}

/// The agent's own tools the scenario's `native` steps run without asking (`ask: false`).
pub fn natives_run_unasked(agent: AgentKind, fake: &Script) -> Vec<String> {
    let mut names = Vec::new();
    for step in fake.turns.iter().flat_map(|turn| &turn.steps) {
        if let Step::Native(native) = step
            && !native.ask
        {
            let (name, _) =
                agent.native_call(&native.tool, native.kind, native.path.as_deref(), "");
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}
