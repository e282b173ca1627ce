//! The runner's second host: a scenario's chat through DSH's own agent loop
//! (`@deepseek-ai/dsh-agent-loop` in Node, `dsh-plugin/real-loop/driver.mjs`) with the
//! DSH plugin mounted, instead of dsh-sim's loop. Everything else is the runner's: the
//! workspace, the fake and its script, the adapter's configuration (handed to the plugin
//! as its JSON config), the checks between runs, disposal's leak checks and every judge.
//! The driver records what DSH's loop consumed and dsh-sim judges that record exactly as
//! it judges its own transcript, so a scenario means the same thing under both loops.
//!
//! Beside it: [`plugin_config`] (the adapter's configuration as the plugin's JSON, and
//! what the plugin cannot express), [`record`] (the driver's record as a transcript).

pub mod plugin_config;
pub mod record;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use antigravity_acp::AdapterConfig;
use serde_json::{Value, json};
use test_support::test_overrides::{self, TestOverrides};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::host::registry::{BUNDLE_DEFAULT_MODEL, split_model};
use crate::host::tools::{HostTool, ToolBehaviour};
use crate::host::transcript::Transcript;
use crate::runner::judge::between_runs::{checks_after_run, checks_before_run};
use crate::runner::options::{
    ChatRun, DEFAULT_SYSTEM_PROMPT, RealLoopHost, RunnerOptions, ServerChoice, chat_bound,
};
use crate::scenario::{AbortPoint, Permission, Scenario};

/// The prefix of the driver's protocol lines on its stdout.
const PROTOCOL_PREFIX: &str = "@@dsh-loop ";

/// How long the driver has to mount DSH's loop and the plugin.
const START_BOUND: Duration = Duration::from_secs(30);

/// Where the drive leaves what it saw.
pub(crate) struct Recorded<'a> {
    /// The chat as DSH's loop saw it.
    pub(crate) transcript: &'a mut Transcript,
    /// Why the scenario failed.
    pub(crate) failures: &'a mut Vec<String>,
    /// Remarks.
    pub(crate) notes: &'a mut Vec<String>,
}

/// Why `scenario` is not run under DSH's loop (`None`: it is, or the loop is dsh-sim's).
pub fn skip_reason(scenario: &Scenario, options: &RunnerOptions) -> Option<String> {
    options.real_loop.as_ref()?;
    if let Some(reason) = &scenario.simulator_only {
        return Some(format!("simulator only: {reason}"));
    }
    if !matches!(
        options.server,
        ServerChoice::Fake { .. } | ServerChoice::Agent(_)
    ) {
        return Some("--real-loop runs against the fake or a real agent (--agent) only".to_owned());
    }
    None
}

/// The installer's progress events the test addon recorded during the chat, for the
/// install judge (empty when it recorded none).
pub fn install_events(workspace: &Path) -> Vec<antigravity_acp::install::InstallEvent> {
    let text =
        std::fs::read_to_string(plugin_config::install_events_file(workspace)).unwrap_or_default();
    text.lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// What `scenario` uses that DSH's loop cannot express, unmarked (a failure: the scenario
/// must say `simulator_only`).
fn inexpressible(scenario: &Scenario) -> Option<String> {
    if scenario.install.as_ref().is_some_and(|install| {
        install.fault == Some(crate::scenario::InstallFault::SwapFileBeforeLaunch)
    }) {
        return Some(
            "`install.fault: swap_file_before_launch` (the swap strikes from the installer's \
             progress callback in dsh-sim's process; the plugin's installer reports to a file)"
                .to_owned(),
        );
    }
    if scenario.expect.chaos.is_some() {
        return Some(format!("`{}`", crate::scenario::CHAOS_SIMULATOR_ONLY));
    }
    if scenario.dsh.fault.is_some() {
        return Some(
            "`dsh.fault` (a DSH fault point is the simulator's: DSH's loop has no hook to \
             abort, drop or dispose at a chunk index, or to bend its own history)"
                .to_owned(),
        );
    }
    for entry in &scenario.dsh.chat {
        if entry.after_image {
            return Some(
                "`after_image` (the driver has no attachment store to resolve an image from)"
                    .to_owned(),
            );
        }
        match entry.abort {
            Some(AbortPoint::LeaveToolCalls) => {
                return Some(
                    "`abort: leave_tool_calls` (DSH's loop aborts the turn signal when it \
                     abandons tool calls)"
                        .to_owned(),
                );
            }
            Some(AbortPoint::DropOnFirstDelta) => {
                return Some(
                    "`abort: drop_on_first_delta` (DSH's loop reads every stream to its \
                     finish)"
                        .to_owned(),
                );
            }
            Some(AbortPoint::OnFirstDeltaReadingOn) => {
                return Some(
                    "`abort: on_first_delta_reading_on` (DSH's loop takes no chunk after an \
                     abort)"
                        .to_owned(),
                );
            }
            _ => {}
        }
    }
    None
}

/// Drives the chat through DSH's loop and records what it saw.
pub(crate) async fn drive(
    host: &RealLoopHost,
    chat: &ChatRun<'_>,
    config: AdapterConfig,
    scratch_root: &Path,
    out: &mut Recorded<'_>,
) {
    let scenario = chat.scenario;
    if let Some(feature) = inexpressible(scenario) {
        out.failures.push(format!(
            "the scenario uses {feature}, which DSH's own loop cannot express: mark it \
             `simulator_only: \"<why>\"`"
        ));
        return;
    }
    let workspace = scratch_root.parent().unwrap_or(scratch_root).to_path_buf();
    let plugin = match plugin_config::plugin_config(&config, &workspace) {
        Ok(plugin) => plugin,
        Err(why) => {
            out.failures.push(format!(
                "the plugin's config cannot express this scenario's adapter settings ({why}): \
                 mark it `simulator_only: \"<why>\"`"
            ));
            return;
        }
    };
    let spec = match driver_spec(scenario, plugin.config, &workspace) {
        Ok(spec) => spec,
        Err(why) => {
            out.failures.push(why);
            return;
        }
    };
    let spec_path = workspace.join("real-loop-spec.json");
    let record_path = workspace.join("real-loop-record.json");
    let stderr_path = workspace.join("real-loop-stderr.txt");
    let mut spec = spec;
    spec["record"] = json!(record_path);
    // Where a held tool (`hold_until_fake_answers`) reads the fake's journal.
    spec["journalDir"] = json!(chat.journal_dir);
    if let Err(error) = std::fs::write(&spec_path, spec.to_string()) {
        out.failures
            .push(format!("cannot write the real loop's spec: {error}"));
        return;
    }
    let mut driver =
        match Driver::start(host, &spec_path, &stderr_path, &config, &plugin.overrides).await {
            Ok(driver) => driver,
            Err(why) => {
                out.failures.push(why);
                return;
            }
        };
    let time_bound = chat_bound(scenario, chat.options);
    let runs = tokio::time::timeout(time_bound, async {
        for (index, entry) in scenario.dsh.chat.iter().enumerate() {
            out.failures
                .extend(checks_before_run(entry, chat.journal_dir, time_bound).await);
            driver.send(json!({"cmd": "run", "index": index})).await?;
            driver.wait_for("ran").await?;
            out.failures
                .extend(checks_after_run(entry, chat.journal_dir, false).await);
        }
        Ok::<(), String>(())
    })
    .await;
    let finished = match runs {
        Ok(Ok(())) => driver.finish("finish", chat.options.dispose_bound).await,
        Ok(Err(why)) => Err(why),
        Err(_) => {
            out.failures.push(format!(
                "the chat did not finish within {time_bound:?} (a scenario that needs longer \
                 sets `time_bound_secs`)"
            ));
            driver.finish("cancel", chat.options.dispose_bound).await
        }
    };
    if let Err(why) = finished {
        out.failures.push(format!(
            "DSH's loop (the Node driver) failed: {why}{}",
            stderr_tail(&stderr_path)
        ));
    }
    match std::fs::read_to_string(&record_path) {
        Ok(text) => match record::judge_record(&text, scenario) {
            Ok(judged) => {
                *out.transcript = judged.transcript;
                out.failures.extend(judged.failures);
            }
            Err(why) => out.failures.push(why),
        },
        Err(error) => out.failures.push(format!(
            "DSH's loop left no record: {error}{}",
            stderr_tail(&stderr_path)
        )),
    }
    out.notes
        .push("host: DSH's own agent loop (dsh-plugin/real-loop/driver.mjs)".to_owned());
}

/// The last lines the driver wrote to stderr, for a failure message (Node's own output:
/// the adapter writes no remote text there).
fn stderr_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(8).collect();
    if lines.is_empty() {
        return String::new();
    }
    let tail: Vec<&str> = lines.into_iter().rev().collect();
    format!("; its stderr ends:\n    {}", tail.join("\n    "))
}

/// What the driver needs: the plugin's config, the model, the system prompt, the tools
/// with their permissions and behaviours, the chat, and which queries follow it.
fn driver_spec(scenario: &Scenario, plugin: Value, workspace: &Path) -> Result<Value, String> {
    let model = scenario
        .dsh
        .model
        .clone()
        .unwrap_or_else(|| format!("{}/{}", BUNDLE_DEFAULT_MODEL.0, BUNDLE_DEFAULT_MODEL.1));
    let (provider, model_id) =
        split_model(&model).map_err(|e| format!("DSH cannot start the chat: {e}"))?;
    let tools: Vec<Value> = scenario
        .dsh
        .tools
        .iter()
        .map(|spec| {
            let tool = HostTool::from_spec(spec);
            let behaviour = match &tool.behaviour {
                ToolBehaviour::Output(value) => json!({"output": value}),
                ToolBehaviour::Fails(text) => json!({"fails": text}),
                ToolBehaviour::Subagent(task) => json!({"subagent": task}),
                ToolBehaviour::TitleRequest(text) => json!({"titleRequest": text}),
            };
            json!({
                "name": tool.definition.name,
                "description": tool.definition.description,
                "parameters": tool.definition.parameters,
                "permission": match tool.permission {
                    Permission::Allow => "allow",
                    Permission::Deny => "deny",
                    Permission::AskApproved => "ask_approved",
                    Permission::AskRejected => "ask_rejected",
                },
                "behaviour": behaviour,
                "delayMs": spec.delay_ms,
                "holdUntilFakeAnswers": spec.hold_until_fake_answers,
            })
        })
        .collect();
    let chat: Vec<Value> = scenario
        .dsh
        .chat
        .iter()
        .map(|entry| {
            json!({
                "user": entry.user,
                "abort": entry.abort.map(|point| match point {
                    AbortPoint::OnFirstDelta => "on_first_delta",
                    AbortPoint::OnToolCalls => "on_tool_calls",
                    AbortPoint::LeaveToolCalls => "leave_tool_calls",
                    AbortPoint::DropOnFirstDelta => "drop_on_first_delta",
                    AbortPoint::OnFirstDeltaReadingOn => "on_first_delta_reading_on",
                }),
                "newChat": entry.new_chat,
                "withoutTools": entry.without_tools,
                "offerTools": entry.offer_tools,
            })
        })
        .collect();
    Ok(json!({
        "plugin": plugin,
        "model": {"provider": provider, "model": model_id},
        "system": scenario.dsh.system.clone().unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_owned()),
        "maxTokens": scenario.dsh.max_tokens,
        "tools": tools,
        "chat": chat,
        "cwd": workspace,
        "queries": {
            "listModelsFirst": scenario.dsh.list_models,
            "modelsListed": scenario.expect.models_listed.is_some(),
            "contextWindow": scenario.expect.context_window.is_some(),
        },
    }))
}

/// The running driver: its stdin for commands, its stdout for protocol lines.
struct Driver {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Driver {
    /// Starts the driver with the host's environment plus what the runner planted for the
    /// adapter (its `host_env`), and waits until DSH's loop and the plugin are mounted.
    async fn start(
        host: &RealLoopHost,
        spec: &Path,
        stderr: &Path,
        config: &AdapterConfig,
        overrides: &TestOverrides,
    ) -> Result<Self, String> {
        let overrides = serde_json::to_string(overrides)
            .map_err(|e| format!("cannot write the test addon's overrides: {e}"))?;
        let stderr = std::fs::File::create(stderr)
            .map_err(|e| format!("cannot make the real loop's stderr file: {e}"))?;
        let mut command = tokio::process::Command::new(&host.node);
        command
            .arg(&host.driver)
            .arg(spec)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .kill_on_drop(true);
        if let Some(env) = &config.host_env {
            command.env_clear().envs(env.iter().cloned());
        }
        command.env(test_overrides::VARIABLE, overrides);
        let mut child = command.spawn().map_err(|e| {
            format!(
                "cannot start DSH's loop ({} {}): {e}",
                host.node.display(),
                host.driver.display()
            )
        })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("the real loop's pipes are missing".to_owned());
        };
        let mut driver = Self {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
        };
        match tokio::time::timeout(START_BOUND, driver.wait_for("ready")).await {
            Ok(result) => result?,
            Err(_) => return Err(format!("DSH's loop did not start within {START_BOUND:?}")),
        }
        Ok(driver)
    }

    async fn send(&mut self, command: Value) -> Result<(), String> {
        let line = format!("{command}\n");
        self.stdin
            .write_all(line.as_bytes())
            .await
            .map_err(|e| format!("cannot write to DSH's loop: {e}"))
    }

    /// Reads protocol lines until the event `name`.
    async fn wait_for(&mut self, name: &str) -> Result<(), String> {
        loop {
            let line = self
                .lines
                .next_line()
                .await
                .map_err(|e| format!("cannot read DSH's loop: {e}"))?
                .ok_or_else(|| format!("DSH's loop exited before `{name}`"))?;
            let Some(event) = line.strip_prefix(PROTOCOL_PREFIX) else {
                continue;
            };
            let event: Value = serde_json::from_str(event)
                .map_err(|e| format!("DSH's loop wrote a broken protocol line: {e}"))?;
            if event.get("event").and_then(Value::as_str) == Some(name) {
                return Ok(());
            }
        }
    }

    /// Sends `finish` or `cancel` and waits, bounded, for the driver to dispose and exit.
    async fn finish(mut self, command: &str, bound: Duration) -> Result<(), String> {
        self.send(json!({ "cmd": command })).await?;
        let done = tokio::time::timeout(bound, async {
            self.wait_for("done").await?;
            self.child
                .wait()
                .await
                .map_err(|e| format!("cannot wait for DSH's loop: {e}"))
        })
        .await;
        match done {
            Ok(Ok(status)) if status.success() => Ok(()),
            Ok(Ok(status)) => Err(format!("DSH's loop exited with {status}")),
            Ok(Err(why)) => Err(why),
            Err(_) => {
                let killed = match self.child.kill().await {
                    Ok(()) => "killed",
                    Err(_) => "could not be killed",
                };
                Err(format!(
                    "DSH's loop did not dispose within {bound:?} ({killed})"
                ))
            }
        }
    }
}
