//! A real ACP agent under test (`dsh-sim run --agent`): Gemini CLI (`gemini --acp`), run
//! here offline, or Google's 1.3.0 build in the nightly. The model service sits outside the
//! system, so it is scripted ([`fake_gemini_api`], started per scenario on loopback and
//! playing the scenario's `fake.turns`); the agent is real. This module owns what differs
//! per agent ([`AgentKind`]: its native tools, its private home, whether it offers a
//! `model` config option) and a run's set-up ([`AgentRun`]): the model API, the agent's
//! private home signed in with an API key, and the variables handed to it through the
//! adapter's `extra_env` (the adapter's allowlist is not widened).
//!
//! - [`model_script`]: a scenario's `fake.turns` as the model API's script.

pub mod model_script;

use std::path::{Path, PathBuf};

use antigravity_acp::ServerCommand;
use fake_antigravity::script::{NativeKind, Step, StopScript};
use fake_gemini_api::ModelApi;

use crate::runner::ServerChoice;
use crate::runner::confinement::RunnerPaths;
use crate::runner::judge::model_api::ModelApiRun;
use crate::runner::judge::wire::ProcessFacts;
use crate::scenario::{DshFault, Expectations, Scenario, WireExpectations};

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
        let refused_before_seen = model_script::runs_natives(&scenario.fake)
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

/// What one scenario's run against a real agent holds: the model API and where its
/// journal and the agent's home are.
pub struct AgentRun {
    /// The scripted model API.
    pub model_api: ModelApi,
    /// Its journal file.
    pub journal: PathBuf,
    /// The agent's private home (written by the agent).
    pub home: PathBuf,
    /// The variables handed to the agent through the adapter's `extra_env`.
    pub env: Vec<(String, String)>,
    /// The agent's own tools the runner turned off in its settings.
    pub disabled_natives: Vec<String>,
}

/// The API key the agent is signed in with: any value is accepted by the model API, and
/// it is journaled only by its shape.
const API_KEY: &str = "dsh-sim-scripted-model-key";

impl AgentRun {
    /// Starts the model API with the scenario's script and makes the agent's home under
    /// `workspace`.
    pub async fn start(
        agent: &RealAgent,
        scenario: &Scenario,
        workspace: &Path,
    ) -> Result<Self, String> {
        let script = model_script::model_script(agent.kind, &scenario.fake)?;
        let journal = workspace.join("model-api.jsonl");
        let model_api = ModelApi::start(script, journal.clone())
            .await
            .map_err(|e| format!("cannot start the scripted model API: {e}"))?;
        let home = workspace.join("agent-home");
        let natives_run = model_script::runs_natives(&scenario.fake);
        let disabled_natives = match agent.kind {
            AgentKind::GeminiCli if !natives_run => GEMINI_CLI_NATIVE_TOOLS
                .iter()
                .map(|t| (*t).to_owned())
                .collect(),
            _ => Vec::new(),
        };
        let mut env = vec![
            ("GOOGLE_GEMINI_BASE_URL".to_owned(), model_api.url()),
            ("GEMINI_API_KEY".to_owned(), API_KEY.to_owned()),
        ];
        match agent.kind {
            AgentKind::GeminiCli => {
                let unasked = model_script::natives_run_unasked(agent.kind, &scenario.fake);
                write_gemini_cli_settings(&home, &disabled_natives, &unasked)?;
                env.push(("HOME".to_owned(), home.display().to_string()));
                env.push(("GEMINI_CLI_NO_RELAUNCH".to_owned(), "true".to_owned()));
            }
            AgentKind::Antigravity => {
                write_file(
                    &home.join("antigravity-acp/settings.json"),
                    r#"{"auth":{"type":"gemini-api-key"}}"#,
                )?;
                env.push(("GEMINI_HOME".to_owned(), home.display().to_string()));
            }
        }
        Ok(Self {
            model_api,
            journal,
            home,
            env,
            disabled_natives,
        })
    }
}

/// Gemini CLI's settings in its private home: signed in with the API key, folder trust
/// off (else it loads no MCP server a session names), no telemetry, no update checks, a
/// fixed model (no routing requests), its own tools off unless the scenario runs one, and
/// those a scenario's `native` steps run without asking (`ask: false`) allowed without a
/// confirmation, as 1.3.0 runs its reads.
fn write_gemini_cli_settings(
    home: &Path,
    disabled: &[String],
    unasked: &[String],
) -> Result<(), String> {
    let settings = serde_json::json!({
        "security": {
            "auth": { "selectedType": "gemini-api-key" },
            "folderTrust": { "enabled": false },
        },
        "privacy": { "usageStatisticsEnabled": false },
        "telemetry": { "enabled": false },
        "general": { "disableAutoUpdate": true, "disableUpdateNag": true },
        "model": { "name": "gemini-2.5-pro" },
        "tools": { "exclude": disabled, "allowed": unasked },
    });
    write_file(&home.join(".gemini/settings.json"), &settings.to_string())
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

impl AgentRun {
    /// The agent's command behind the relay `tap` (the client-side ACP journal), with the
    /// model API's address, the API key and the private home as the server command's own
    /// variables (the plugin's `server.env`, which both loops carry): the adapter's
    /// allowlist is not widened.
    pub fn command(&self, agent: &RealAgent, tap: &Path, journal_dir: &Path) -> ServerCommand {
        let mut command = agent.command.clone();
        command.env.extend(self.env.iter().cloned());
        // In name order, as the plugin's `server.env` (a JSON object) hands them back.
        command.env.sort();
        crate::runner::server_command::tapped_command(tap, &command, journal_dir)
    }

    /// What the confined agent must also reach: its runtime and package, and its home.
    pub fn paths(&self, agent: &RealAgent, journal_dir: &Path) -> RunnerPaths {
        let mut paths = RunnerPaths::relayed(&agent.command, journal_dir);
        paths.read.extend(agent.reads.iter().cloned());
        paths.write.push(self.home.clone());
        paths
    }

    /// Stops the model API and judges its journal: every failure found.
    pub async fn finish(self, agent: &RealAgent, scenario: &Scenario) -> Vec<String> {
        let journal = self.model_api.journal();
        self.model_api.shutdown().await;
        let expects_model = scenario.expect.error.is_none()
            && scenario.expect.finish != Some(crate::scenario::FinishKind::Error);
        let run = ModelApiRun {
            journal: &journal,
            scripted: !scenario.fake.turns.is_empty(),
            expects_model,
            disabled_natives: &self.disabled_natives,
            honours_disabling: agent.kind == AgentKind::GeminiCli,
        };
        crate::runner::judge::model_api::judge(&run, scenario.expect.model_api.as_ref())
    }
}

/// Copies the model API's journal (`journal`) into a scenario's artefact `folder`, as
/// `model-api.jsonl`, when the model API wrote one.
pub fn keep_journal(journal: &Path, folder: &Path) -> std::io::Result<()> {
    if !journal.is_file() {
        return Ok(());
    }
    std::fs::create_dir_all(folder)?;
    std::fs::copy(journal, folder.join("model-api.jsonl")).map(|_| ())
}

/// Why the runner does not play `scenario` against `server`, if it does not.
pub fn skip_reason(scenario: &Scenario, server: &ServerChoice) -> Option<String> {
    match server {
        ServerChoice::Fake { .. } => None,
        ServerChoice::Agent(agent) => match &scenario.fake_only {
            Some(reason) => Some(format!("fake only: {reason}")),
            None => agent.kind.cannot_play(scenario),
        },
        ServerChoice::Command(_) | ServerChoice::Installed(_) => {
            if let Some(reason) = &scenario.fake_only {
                Some(format!("fake only: {reason}"))
            } else if !scenario.fake.turns.is_empty() {
                Some(
                    "scripts the model (`fake.turns`): against an unscripted server it runs \
                     only with `--agent`, which plays the script through the model API"
                        .to_owned(),
                )
            } else {
                None
            }
        }
    }
}

/// Takes out of `expect` the checks only the fake's own journal can judge (what the
/// server did on MCP, its native steps, its slash commands, its settings writes, why it
/// exited); whether any was there.
pub fn fake_journal_checks_dropped(expect: &mut WireExpectations) -> bool {
    let dropped = [
        expect.mcp_tool_calls.take().is_some(),
        expect.mcp_tool_results.take().is_some(),
        expect.mcp_exchanges.take().is_some(),
        expect.mcp_tools_listed.take().is_some(),
        expect.mcp_tool_results_any_order.take().is_some(),
        !std::mem::take(&mut expect.mcp_results_contain).is_empty(),
        expect.native_steps_withheld.take().is_some(),
        expect.native_actions.take().is_some(),
        expect.slash_commands.take().is_some(),
        expect.settings_written.take().is_some(),
        // Why a process exited is what the fake journals of itself; the relay sees a status.
        expect.exits.take().is_some(),
    ];
    dropped.contains(&true)
}

/// Where the pinned Gemini CLI is installed (`npm ci --prefix ci/real-agents`).
pub fn pinned_gemini_cli() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ci/real-agents/node_modules/@google/gemini-cli/bundle/gemini.js")
}

impl RealAgent {
    /// The agent `kind`, started by `server` (`<program> <args…>`) or, for Gemini CLI, by
    /// the pinned install run with `node` from `PATH`.
    pub fn new(kind: AgentKind, server: Option<&str>) -> anyhow::Result<Self> {
        let command = match (kind, server) {
            (_, Some(line)) => crate::commands::cli::parse_server_command(line)?,
            (AgentKind::GeminiCli, None) => {
                let bundle = pinned_gemini_cli();
                if !bundle.is_file() {
                    anyhow::bail!(
                        "no Gemini CLI at {}: run `npm ci --prefix ci/real-agents` (or name \
                         the agent's command with --server)",
                        bundle.display()
                    );
                }
                ServerCommand {
                    program: PathBuf::from("node"),
                    args: vec![bundle.display().to_string(), "--acp".to_owned()],
                    env: Vec::new(),
                }
            }
            (AgentKind::Antigravity, None) => {
                anyhow::bail!("--agent antigravity needs --server naming the build's command")
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

/// The kind of each option the fake offers, by its id: how an expected answer written
/// for the fake (`permission_answers: [allow]`) is judged against an agent whose options
/// are named otherwise (Gemini CLI's `proceed_once`).
const FAKE_OPTION_KINDS: &[(&str, &str)] = &[
    ("allow", "allow_once"),
    ("allow_always", "allow_always"),
    ("deny", "reject_once"),
];

/// Judges what a real agent announces its own way by what it means: `update_counts`
/// (how an agent chunks and announces its updates; Gemini CLI sends no `tool_call`
/// before a call's `tool_call_update`) is left to the fake, and permission answers are
/// compared by the kind of the option chosen. Whether `update_counts` was there.
pub fn judge_by_meaning(expect: &mut WireExpectations, processes: &mut [ProcessFacts]) -> bool {
    if let Some(answers) = expect.permission_answers.as_mut() {
        for answer in answers.iter_mut() {
            if let Some((_, kind)) = FAKE_OPTION_KINDS.iter().find(|(id, _)| id == answer) {
                *answer = (*kind).to_owned();
            }
        }
        for process in processes.iter_mut() {
            process.permission_answers = process.permission_answer_kinds.clone();
        }
    }
    !std::mem::take(&mut expect.update_counts).is_empty()
}
