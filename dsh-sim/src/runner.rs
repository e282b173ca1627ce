//! Running one scenario file end to end: parse it, launch the adapter against the fake
//! (or any ACP server command), drive DSH's agent loop for each user message under an
//! overall time bound, dispose the adapter, check for leaks, judge the expectations,
//! and leave artefacts when it fails. Each scenario gets its own tokio runtime.
//!
//! The room of running scenarios and judging them. This file runs one; beside it:
//! - finding and choosing the files: [`discover`] (files and folders given),
//!   [`selection`] (`--filter`, `--only-failed` and the record of last failures);
//! - the other host: [`real_loop`] (the chat through DSH's own agent loop in Node);
//! - the other server: [`real_agent`] (a real ACP agent, Gemini CLI or 1.3.0, with the
//!   scripted model API playing the scenario's `fake.turns`);
//! - what a run needs besides the adapter: [`gemini_home`] (a fresh `GEMINI_HOME`),
//!   [`confinement`] (what the runner's own fake and relay must reach, confined),
//!   [`files`] (the files a scenario plants and judges on the real filesystem),
//!   [`provision`] (install scenarios: the served agent index and archive, the cache's
//!   starting state), [`leftovers`] (the crash leftovers a scenario plants for B08),
//!   [`client_tap`] (the client-side journal of a run against any server, `dsh-sim tap`);
//! - judging it: the judges' room, [`judge`]: the DSH-side expectations, `expect.wire`
//!   on the journal, the checks before and after each run, the leak checks, B08 after
//!   disposal, the install, and the chaos invariants. The judges call nothing of the
//!   runner's but what they read.
//! - what a failure leaves: [`artifacts`] (reasons, transcript, journal),
//!   [`sequence`] (the run as a Mermaid diagram), [`replay`] (the replay scenario a
//!   failure against a real server leaves).

pub mod artifacts;
pub mod client_tap;
pub mod confinement;
pub mod discover;
pub mod dsh_fault;
pub mod files;
pub mod gemini_home;
pub mod judge;
pub mod leftovers;
pub mod options;
pub mod provision;
pub mod real_agent;
pub mod real_loop;
pub mod replay;
pub mod selection;
pub mod sequence;
pub mod server_command;
pub mod stderr_redaction;

pub use options::{
    DEFAULT_DISPOSE_BOUND, DEFAULT_SYSTEM_PROMPT, DEFAULT_TIME_BOUND, RunnerOptions, ServerChoice,
};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use antigravity_acp::{AdapterConfig, ServerSource};
use fake_antigravity::journal::JournalEntry;

use crate::host::agent_loop::{AgentLoop, ChatSetup};
use crate::host::registry::{BUNDLE_DEFAULT_MODEL, HostRegistry, split_model};
use crate::host::tools::HostTool;
use crate::host::transcript::Transcript;
use crate::runner::artifacts::FailureRecord;
use crate::runner::confinement::RunnerPaths;
use crate::runner::judge::chaos::watch::{RunWatch, live_tasks_after_disposal};
use crate::runner::judge::expect::check_transcript;
use crate::runner::judge::install::judge_install;
use crate::runner::judge::leak::find_leaks_keeping;
use crate::runner::judge::server_home::ServerHomeCheck;
use crate::runner::judge::wire::ProcessFacts;
use crate::runner::judge::{between_runs, fake_faults, leak, wire};
use crate::runner::options::{ChatRun, chat_bound};
use crate::runner::provision::{ProvisionPaths, Provisioning};
use crate::runner::server_command::{fake_command, tapped_command};
use crate::scenario::{self, Scenario};

/// The verdict on one scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every expectation held and nothing leaked.
    Pass,
    /// Why it failed.
    Fail(Vec<String>),
    /// Why it was not run.
    Skip(String),
    /// It failed, as its `known_failure` says it still does (XFAIL): not a failure.
    KnownFailure {
        /// The scenario's `known_failure` text.
        reason: String,
        /// Why it failed this time.
        failures: Vec<String>,
    },
}

/// The message of a scenario marked `known_failure` that passed (XPASS, a failure).
pub const XPASS: &str = "XPASS: the scenario passes although it is marked `known_failure`; \
                         remove the marker (the bug it reproduces is fixed)";

/// Applies a scenario's `known_failure` marker to its verdict: a failure becomes
/// [`Verdict::KnownFailure`], a pass becomes a failure ([`XPASS`]), a skip stays a skip.
pub fn judge_known_failure(verdict: Verdict, known_failure: Option<&str>) -> Verdict {
    let Some(reason) = known_failure else {
        return verdict;
    };
    match verdict {
        Verdict::Fail(failures) => Verdict::KnownFailure {
            reason: reason.to_owned(),
            failures,
        },
        Verdict::Pass => Verdict::Fail(vec![format!("{XPASS}: {reason}")]),
        other => other,
    }
}

/// The report on one scenario.
#[derive(Debug, Clone)]
pub struct ScenarioReport {
    /// The scenario file.
    pub path: PathBuf,
    /// Its `name`, once parsed.
    pub name: Option<String>,
    /// The verdict.
    pub verdict: Verdict,
    /// Remarks (e.g. wire checks skipped).
    pub notes: Vec<String>,
    /// How long it took.
    pub duration: Duration,
    /// Where its artefacts were left (a failure, or `keep_passing_artifacts`).
    pub artifacts: Option<PathBuf>,
    /// The chaos judge's findings (`expect.chaos` scenarios only).
    pub chaos: Option<crate::runner::judge::chaos::invariants::ChaosOutcome>,
}

/// What running the chat produced.
struct Execution {
    transcript: Transcript,
    journal: Vec<Vec<JournalEntry>>,
    failures: Vec<String>,
    notes: Vec<String>,
    chaos: Option<crate::runner::judge::chaos::invariants::ChaosOutcome>,
}

/// Runs the scenario at `path`.
pub fn run_file(path: &Path, options: &RunnerOptions) -> ScenarioReport {
    match scenario::load(path) {
        Ok(scenario) => run_scenario(&scenario, path, options, None),
        Err(error) => ScenarioReport {
            path: path.to_owned(),
            name: None,
            verdict: Verdict::Fail(vec![error.to_string()]),
            notes: Vec::new(),
            duration: Duration::ZERO,
            artifacts: None,
            chaos: None,
        },
    }
}

/// Runs `scenario` (read from `path`, which also names its artefacts folder), on `runtime`
/// when given (`dsh-sim chaos` runs every run on one), else on a runtime of its own.
pub fn run_scenario(
    scenario: &Scenario,
    path: &Path,
    options: &RunnerOptions,
    runtime: Option<&tokio::runtime::Runtime>,
) -> ScenarioReport {
    let started = Instant::now();
    let mut report = ScenarioReport {
        path: path.to_owned(),
        name: None,
        verdict: Verdict::Pass,
        notes: Vec::new(),
        duration: Duration::ZERO,
        artifacts: None,
        chaos: None,
    };
    report.name = Some(scenario.name.clone());
    tracing::debug!(scenario = %path.display(), "scenario starts");
    if let Some(reason) = crate::scenario::not_run_here(scenario.platforms.as_ref()) {
        report.verdict = Verdict::Skip(reason);
        report.duration = started.elapsed();
        return report;
    }
    if let Some(reason) = real_agent::skip_reason(scenario, &options.server) {
        report.verdict = Verdict::Skip(reason);
        report.duration = started.elapsed();
        return report;
    }
    if !matches!(options.server, ServerChoice::Fake { .. }) && scenario.install.is_some() {
        report.verdict =
            Verdict::Skip("install scenarios serve their own archive of the fake".to_owned());
        report.duration = started.elapsed();
        return report;
    }
    if let Some(reason) = real_loop::skip_reason(scenario, options) {
        report.verdict = Verdict::Skip(reason);
        report.duration = started.elapsed();
        return report;
    }
    // Under a real agent, what DSH sees is judged as the agent shows it.
    let shown;
    let scenario = match &options.server {
        ServerChoice::Agent(agent) => {
            shown = Scenario {
                expect: agent.kind.as_shown(&scenario.expect),
                ..scenario.clone()
            };
            &shown
        }
        _ => scenario,
    };
    let folder = options
        .artifacts_root
        .as_ref()
        .map(|root| artifacts::folder_for(root, path));
    match run_in_workspace(scenario, path, options, folder.as_deref(), runtime) {
        Ok(finished) => {
            report.notes = finished.notes;
            report.artifacts = finished.artifacts;
            report.chaos = finished.chaos;
            if !finished.failures.is_empty() {
                report.verdict = Verdict::Fail(finished.failures);
            }
        }
        Err(error) => report.verdict = Verdict::Fail(vec![error]),
    }
    report.verdict = judge_known_failure(report.verdict, scenario.known_failure.as_deref());
    report.duration = started.elapsed();
    tracing::debug!(
        scenario = %path.display(),
        passed = report.verdict == Verdict::Pass,
        duration_ms = report.duration.as_millis(),
        "scenario ends"
    );
    report
}

/// What a scenario run left: failures, notes, and where its artefacts are.
struct Finished {
    failures: Vec<String>,
    notes: Vec<String>,
    artifacts: Option<PathBuf>,
    chaos: Option<crate::runner::judge::chaos::invariants::ChaosOutcome>,
}

/// Sets up a temporary workspace (script, journal folder, scratch root) and a runtime,
/// runs the chat, and writes the artefacts (into `folder`) while the journal exists.
fn run_in_workspace(
    scenario: &Scenario,
    source: &Path,
    options: &RunnerOptions,
    folder: Option<&Path>,
    shared: Option<&tokio::runtime::Runtime>,
) -> Result<Finished, String> {
    let workspace = tempfile::Builder::new()
        .prefix("dsh-sim-")
        .tempdir()
        .map_err(|e| format!("cannot make a temporary workspace: {e}"))?;
    let scratch_root = workspace.path().join("scratch");
    let journal_dir = workspace.path().join("journal");
    std::fs::create_dir_all(&scratch_root)
        .and_then(|()| std::fs::create_dir_all(&journal_dir))
        .map_err(|e| format!("cannot prepare the workspace: {e}"))?;
    files::plant(workspace.path(), &scenario.dsh.files)?;
    let fake_mode = matches!(options.server, ServerChoice::Fake { .. });
    let own_runtime = match shared {
        Some(_) => None,
        None => Some(
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start a tokio runtime: {e}"))?,
        ),
    };
    let Some(runtime) = shared.or(own_runtime.as_ref()) else {
        return Err("no tokio runtime".to_owned());
    };
    let mut provisioning = None;
    let mut agent_run = None;
    let mut own_paths = RunnerPaths::default();
    let server = match &options.server {
        ServerChoice::Fake { program } => {
            let script_path = workspace.path().join("script.json");
            let script = serde_json::to_string_pretty(&files::with_workspace(
                &scenario.fake,
                workspace.path(),
            ))
            .map_err(|e| format!("cannot write the fake's script: {e}"))?;
            own_paths = RunnerPaths::fake(program, &script_path, &journal_dir);
            std::fs::write(&script_path, script)
                .map_err(|e| format!("cannot write the fake's script: {e}"))?;
            match &scenario.install {
                Some(install) => {
                    let paths = ProvisionPaths {
                        program,
                        script: &script_path,
                        journal: &journal_dir,
                        workspace: workspace.path(),
                    };
                    let prepared = runtime.block_on(Provisioning::prepare(install, &paths))?;
                    let source = prepared.server_source();
                    provisioning = Some(prepared);
                    source
                }
                None => fake_command(program, &script_path, &journal_dir).into(),
            }
        }
        ServerChoice::Command(command) => match &options.tap_program {
            Some(tap) => {
                own_paths = RunnerPaths::relayed(command, &journal_dir);
                tapped_command(tap, command, &journal_dir).into()
            }
            None => command.clone().into(),
        },
        ServerChoice::Installed(install) => ServerSource::Installed(install.clone()),
        ServerChoice::Agent(agent) => {
            let started = runtime.block_on(real_agent::AgentRun::start(
                agent,
                scenario,
                workspace.path(),
            ))?;
            let tap = options
                .tap_program
                .as_deref()
                .ok_or("a real agent runs behind the tap: RunnerOptions::tap_program is unset")?;
            let command = started.command(agent, tap, &journal_dir);
            own_paths = started.paths(agent, &journal_dir);
            agent_run = Some(started);
            command.into()
        }
    };
    let client_side = !fake_mode && options.tap_program.is_some();
    let mut config = AdapterConfig {
        server,
        scratch_root: Some(scratch_root.clone()),
        ..AdapterConfig::default()
    };
    let mut planted: Vec<(String, String)> = scenario
        .dsh
        .environment
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // Against the fake, a fresh home even when the scenario asks for none: a confined
    // server may write its credentials home, and no scenario touches the user's.
    let home = match (&scenario.dsh.gemini_home, fake_mode) {
        (Some(home), _) => Some(home.clone()),
        (None, true) => Some(scenario::GeminiHomeSpec::default()),
        (None, false) => None,
    };
    let mut home_dir = None;
    if let Some(home) = &home {
        let dir = gemini_home::make_gemini_home(workspace.path(), home)?;
        planted.push(("GEMINI_HOME".into(), dir.display().to_string()));
        home_dir = Some(dir);
    }
    let home_dir = home_dir.filter(|_| fake_mode);
    let watch = judge::conversations::watch(scenario, home_dir.as_deref(), &scratch_root)?;
    if !planted.is_empty() {
        let mut host: Vec<_> = std::env::vars_os().collect();
        host.extend(planted.into_iter().map(|(k, v)| (k.into(), v.into())));
        config.host_env = Some(host);
    }
    let home_check = ServerHomeCheck::start(scenario, fake_mode, &config);
    own_paths.apply(&options.confinement, &mut config);
    let knobs = &scenario.dsh.adapter;
    if let Some(ms) = knobs.timeout_ms {
        config.timeout = Duration::from_millis(ms);
    }
    if let Some(ms) = knobs.tool_timeout_ms {
        config.tool_timeout = Duration::from_millis(ms);
    }
    if let Some(ms) = knobs.sign_in_timeout_ms {
        config.sign_in_timeout = Duration::from_millis(ms);
    }
    knobs.apply_lifecycle(&mut config);
    config
        .extra_disabled_tools
        .clone_from(&knobs.extra_disabled_tools);
    let journal = (fake_mode || client_side).then_some(journal_dir.as_path());
    let kept = judge::conversations::kept_in_scratch_root(watch.as_ref());
    let run = execute(scenario, config, options, journal, &scratch_root, &kept);
    let mut execution = runtime.block_on(run);
    // After disposal (in `execute`); a live planted ledger stays locked until here.
    execution
        .failures
        .extend(judge::conversations::judge(watch.as_ref()));
    (execution.failures).extend(home_check.iter().flat_map(ServerHomeCheck::judge));
    execution
        .failures
        .extend(files::judge(workspace.path(), &scenario.expect.files));
    let model_api_journal = agent_run.as_ref().map(|run| run.journal.clone());
    if let (Some(run), ServerChoice::Agent(agent)) = (agent_run, &options.server) {
        let judged = runtime.block_on(run.finish(agent, scenario));
        execution.failures.extend(judged);
    }
    match provisioning {
        Some(prepared) => {
            let mut record = runtime.block_on(prepared.finish());
            if options.real_loop.is_some() {
                record.events = real_loop::install_events(workspace.path());
            }
            let processes = wire::extract(&execution.journal);
            execution.failures.extend(judge_install(
                scenario.expect.install.as_ref(),
                &record,
                &execution.transcript,
                &processes,
            ));
        }
        None if scenario.expect.install.is_some() => execution
            .failures
            .push("`expect.install` needs an `install:` section".to_owned()),
        None => {}
    }
    if let Some(own) = own_runtime {
        own.shutdown_timeout(Duration::from_secs(5));
    }
    let mut finished = Finished {
        failures: execution.failures,
        notes: execution.notes,
        artifacts: None,
        chaos: execution.chaos,
    };
    if let Some(path) = &options.diagram {
        match journal {
            Some(_) => {
                if let Err(error) = artifacts::write_diagram(path, &execution.journal) {
                    finished.notes.push(format!(
                        "could not write the diagram to {}: {error}",
                        path.display()
                    ));
                }
            }
            None => finished
                .notes
                .push("no diagram: it is drawn from the fake's journal".to_owned()),
        }
    }
    let Some(folder) = folder else {
        return Ok(finished);
    };
    if finished.failures.is_empty() && !options.keep_passing_artifacts {
        artifacts::clear(folder);
        return Ok(finished);
    }
    let record = FailureRecord {
        reasons: &finished.failures,
        transcript: &execution.transcript,
        journal_dir: journal,
        journal: &execution.journal,
    };
    match artifacts::write(folder, &record) {
        Ok(()) => finished.artifacts = Some(folder.to_owned()),
        Err(error) => finished
            .notes
            .push(format!("could not write artefacts: {error}")),
    }
    if let Some(journal) = &model_api_journal
        && let Err(error) = real_agent::keep_journal(journal, folder)
    {
        finished
            .notes
            .push(format!("could not keep the model API's journal: {error}"));
    }
    if client_side && !finished.failures.is_empty() {
        let original = std::fs::read_to_string(source).unwrap_or_default();
        let replay =
            crate::runner::replay::replay_yaml(&original, &scenario.name, &execution.journal);
        match std::fs::write(folder.join("replay.yaml"), replay) {
            Ok(()) => finished.notes.push(format!(
                "replay scenario (the server's frames as a fake script): {}",
                folder.join("replay.yaml").display()
            )),
            Err(error) => finished
                .notes
                .push(format!("could not write the replay scenario: {error}")),
        }
    }
    Ok(finished)
}

/// The start of the note a run whose fault points were drawn (`dsh-sim chaos`) gets when
/// its `dsh.fault` never struck.
pub const DSH_FAULT_NOT_STRUCK: &str = "dsh.fault not struck";

/// Registers the adapter, drives the chat, disposes, checks leaks and expectations.
async fn execute(
    scenario: &Scenario,
    config: AdapterConfig,
    options: &RunnerOptions,
    journal_dir: Option<&Path>,
    scratch_root: &Path,
    kept_in_scratch_root: &[String],
) -> Execution {
    let mut failures = Vec::new();
    let mut notes = Vec::new();
    let mut transcript = Transcript::default();
    let mut registry = HostRegistry::new();
    let chaos = scenario.expect.chaos.as_ref();
    let watch = chaos.map(|_| RunWatch::start(scenario.fake.planted_secret.as_deref()));
    if let Some(host) = &options.real_loop {
        let chat = ChatRun {
            scenario,
            registry: &registry,
            options,
            journal_dir,
        };
        let record = &mut real_loop::Recorded {
            transcript: &mut transcript,
            failures: &mut failures,
            notes: &mut notes,
        };
        real_loop::drive(host, &chat, config, scratch_root, record).await;
    } else {
        match antigravity_acp::register(&mut registry, config) {
            Ok(_) => {
                // The bundle patch's `agent-default-model` row (C02).
                registry.set_default_model(BUNDLE_DEFAULT_MODEL.0, BUNDLE_DEFAULT_MODEL.1);
                let chat = ChatRun {
                    scenario,
                    registry: &registry,
                    options,
                    journal_dir,
                };
                drive_chat(&chat, &mut transcript, &mut failures, &mut notes).await;
            }
            Err(error) => failures.push(format!("DSH refused the adapter's registration: {error}")),
        }
    }
    for adapter in registry.adapters() {
        if tokio::time::timeout(options.dispose_bound, adapter.dispose())
            .await
            .is_err()
        {
            failures.push(format!(
                "an adapter of {:?} did not finish disposing within {:?}",
                registry.providers(),
                options.dispose_bound
            ));
        }
    }
    let live_tasks = live_tasks_after_disposal(chaos.is_some()).await;
    if chaos.is_none() {
        failures.extend(check_transcript(&scenario.expect, &transcript));
    }
    let journal = match journal_dir {
        Some(dir) => match fake_antigravity::journal::read_dir(dir) {
            Ok(journal) => journal,
            Err(error) => {
                failures.push(format!("cannot read the fake's journal: {error}"));
                Vec::new()
            }
        },
        None => Vec::new(),
    };
    failures.extend(judge::conversations::vanished_while_running(&journal));
    let mut processes: Vec<ProcessFacts> = wire::extract(&journal);
    let client_side = matches!(
        options.server,
        ServerChoice::Command(_) | ServerChoice::Agent(_)
    );
    if journal_dir.is_some() && matches!(options.server, ServerChoice::Fake { .. }) {
        let drawn = options.faults_drawn;
        fake_faults::judge(&scenario.fake, &journal, drawn, &mut failures, &mut notes);
    }
    if journal_dir.is_some() && client_side {
        let mut expect = scenario.expect.wire.clone();
        if let Some(expect) = expect.as_mut()
            && real_agent::fake_journal_checks_dropped(expect)
        {
            notes.push(
                "checks only the fake's journal knows skipped (MCP traffic, native steps, slash \
                 commands, settings writes): the client-side journal sees ACP frames only"
                    .to_owned(),
            );
        }
        if let (Some(expect), ServerChoice::Agent(_)) = (expect.as_mut(), &options.server)
            && real_agent::judge_by_meaning(expect, &mut processes)
        {
            notes.push(
                "update_counts judged against the fake only (how an agent announces its \
                 updates is its own)"
                    .to_owned(),
            );
        }
        failures.extend(wire::check_wire(expect.as_ref(), &processes, scratch_root));
    } else if journal_dir.is_some() && chaos.is_none() {
        failures.extend(wire::check_wire(
            scenario.expect.wire.as_ref(),
            &processes,
            scratch_root,
        ));
    } else if scenario.expect.wire.is_some() {
        notes.push("wire checks skipped (not running the fake)".to_owned());
    }
    let bridges = wire::bridge_urls(&processes);
    failures.extend(
        find_leaks_keeping(
            &processes,
            &bridges,
            scratch_root,
            kept_in_scratch_root,
            leak::exit_bound(),
        )
        .await
        .into_iter()
        .map(|leak| format!("leak: {leak}")),
    );
    let chaos = chaos.zip(watch).map(|(expect, watch)| {
        let left = crate::runner::judge::chaos::verdict::RunLeft {
            transcript: &transcript,
            journal: &journal,
            secret: scenario.fake.planted_secret.as_deref(),
            live_tasks,
        };
        crate::runner::judge::chaos::verdict::judge_run(
            expect,
            watch,
            &left,
            &mut failures,
            &mut notes,
        )
    });
    Execution {
        transcript,
        journal,
        failures,
        notes,
        chaos,
    }
}

async fn drive_chat(
    chat_run: &ChatRun<'_>,
    transcript: &mut Transcript,
    failures: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    let ChatRun {
        scenario,
        registry,
        options,
        journal_dir,
    } = *chat_run;
    let adapter = match registry
        .model_for_chat(scenario.dsh.model.as_deref())
        .and_then(|model| Ok((registry.adapter_for_model(&model)?, model)))
    {
        Ok(found) => found,
        Err(error) => {
            failures.push(format!("DSH cannot start the chat: {error}"));
            return;
        }
    };
    let (adapter, model) = adapter;
    let (provider, model_id) = match split_model(&model) {
        Ok((provider, id)) => (provider.to_owned(), id.to_owned()),
        Err(error) => {
            failures.push(format!("DSH cannot start the chat: {error}"));
            return;
        }
    };
    if scenario.dsh.list_models
        && let Err(error) = adapter.list_models(&provider).await
    {
        // Under chaos a fault may fail it cleanly; only the invariants judge the run.
        failures.push(format!(
            "{}{error}",
            crate::runner::judge::chaos::verdict::LIST_MODELS_FAILED
        ));
    }
    let setup = ChatSetup {
        model,
        system: scenario
            .dsh
            .system
            .clone()
            .unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_owned()),
        tools: scenario.dsh.tools.iter().map(HostTool::from_spec).collect(),
        max_tokens: scenario.dsh.max_tokens,
    };
    let mut chat = AgentLoop::new(adapter.clone(), setup.clone(), options.limits);
    let faults = dsh_fault::fault_plan(scenario, journal_dir);
    chat.set_faults(faults.clone());
    let aborts = std::sync::Mutex::new(vec![chat.abort_signal()]);
    let time_bound = chat_bound(scenario, options);
    let bounded = tokio::time::timeout(time_bound, async {
        for entry in &scenario.dsh.chat {
            failures.extend(between_runs::checks_before_run(entry, journal_dir, time_bound).await);
            if entry.new_chat {
                let mut fresh = setup.clone();
                if entry.without_tools {
                    fresh.tools.clear();
                }
                if let Some(names) = &entry.offer_tools {
                    fresh
                        .tools
                        .retain(|tool| names.contains(&tool.definition.name));
                }
                chat = AgentLoop::new(adapter.clone(), fresh, options.limits);
                chat.set_faults(faults.clone());
                if let Ok(mut aborts) = aborts.lock() {
                    aborts.push(chat.abort_signal());
                }
            }
            if entry.after_image {
                chat.attach_image_to_next_message();
            }
            match entry.abort {
                Some(point) => {
                    chat.run_user_message_aborting(&entry.user, point, transcript)
                        .await
                }
                None => chat.run_user_message(&entry.user, transcript).await,
            };
            failures.extend(
                between_runs::checks_after_run(entry, journal_dir, faults.drops_streams()).await,
            );
        }
    })
    .await;
    // A scenario's fault that never struck proves nothing: the run fails. A drawn point
    // (`dsh-sim chaos`) may lie past the chat's end: it is counted as not struck.
    if let Some(unstruck) = faults.never_struck() {
        if options.faults_drawn {
            notes.push(format!("{DSH_FAULT_NOT_STRUCK}: {unstruck}"));
        } else {
            failures.push(unstruck);
        }
    }
    if let Some(expected) = &scenario.expect.models_listed {
        match adapter.list_models(&provider).await {
            Ok(models) => {
                let listed: Vec<String> = models
                    .into_iter()
                    .map(|m| format!("{}/{}", m.provider, m.id))
                    .collect();
                if *expected != listed {
                    failures.push(format!(
                        "models listed: expected {expected:?}, observed {listed:?}"
                    ));
                }
            }
            Err(error) => failures.push(format!("listModels failed: {error}")),
        }
    }
    if let Some(expected) = scenario.expect.context_window {
        let signal = tokio_util::sync::CancellationToken::new();
        let window = adapter
            .resolve_model(&provider, &model_id, signal)
            .await
            .map(|info| info.context.map(|c| c.context_window));
        if window != Ok(Some(expected)) {
            failures.push(format!(
                "resolveModel's context window: expected {expected}, observed {window:?}"
            ));
        }
    }
    if bounded.is_err() {
        for abort in aborts.lock().map(|a| a.clone()).unwrap_or_default() {
            abort.cancel();
        }
        failures.push(format!(
            "the chat did not finish within {time_bound:?} (a scenario that needs longer \
             sets `time_bound_secs`)"
        ));
    }
}
