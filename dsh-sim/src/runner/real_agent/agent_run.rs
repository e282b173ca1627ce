//! One scenario's run against a real agent ([`AgentRun`]): the scripted model API started
//! with the scenario's script, the agent's private home signed in with an API key, the
//! variables handed to the agent through its server command, what the confined agent may
//! reach, and, at the end, the model API's journal judged and kept with the artefacts.

use std::path::{Path, PathBuf};

use antigravity_acp::ServerCommand;
use fake_gemini_api::ModelApi;

use super::agent_kind::{natives_run_unasked, runs_natives};
use super::{AgentKind, GEMINI_CLI_NATIVE_TOOLS, RealAgent, model_script};
use crate::runner::confinement::RunnerPaths;
use crate::runner::judge::model_api::ModelApiRun;
use crate::scenario::Scenario;

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
        let natives_run = runs_natives(&scenario.fake);
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
                let unasked = natives_run_unasked(agent.kind, &scenario.fake);
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
