//! `dsh-sim chaos` in CI (claim B04): a fixed seed range of seeded fault runs against
//! the fake must pass with zero violations, and each chaos invariant must catch the bad
//! record it exists for (a synthetic transcript or journal fed to the judge).

use std::path::{Path, PathBuf};
use std::time::Duration;

use antigravity_acp::contract::{FinishReason, LlmFailure, StreamChunk};
use dsh_sim::chaos::catalogue::select;
use dsh_sim::chaos::driver::{ChaosSettings, run_session};
use dsh_sim::chaos::plan::{default_paths, load_bases, plan};
use dsh_sim::host::transcript::{
    GenerationRecord, RequestSummary, RunOutcome, RunRecord, Transcript,
};
use dsh_sim::runner::judge::chaos::invariants::{Observed, judge};
use dsh_sim::runner::judge::chaos::watch::Watched;
use dsh_sim::scenario::ChaosExpectation;
use dsh_sim::scenario::FinishKind;
use fake_antigravity::journal::JournalEntry;
use serde_json::json;

/// The seed CI runs, and how many runs: about 20 s in a debug build on 2 cores.
const CI_SEED: u64 = 0x000C_4A05;
const CI_RUNS: u64 = 120;

#[test]
fn a_fixed_seed_range_of_faults_breaks_no_invariant() -> Result<(), String> {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bases = load_bases(&default_paths(&package.join("../scenarios")))?;
    let fake = PathBuf::from(env!("CARGO_BIN_EXE_dsh-sim"));
    let out = fake
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| PathBuf::from("chaos"), |target| target.join("chaos"));
    let settings = ChaosSettings {
        seed: CI_SEED,
        runs: 0..CI_RUNS,
        bases,
        rows: select(&[])?,
        out,
        full_artifacts: false,
    };
    let mut log = Vec::new();
    let summary = run_session(&settings, &fake, &mut log)?;
    let log = String::from_utf8_lossy(&log);
    assert_eq!(summary.runs, CI_RUNS);
    assert!(
        summary.failed.is_empty(),
        "{} failing run(s):\n{log}",
        summary.failed.len()
    );
    let struck: u64 = summary.by_fault.values().map(|t| t.struck).sum();
    assert!(
        struck * 3 >= CI_RUNS,
        "too few faults struck: {struck}\n{log}"
    );
    Ok(())
}

/// A burst turns one call into 65; on a base whose tool starts a subagent that is 65
/// nested chats, which no chat bound of the catalogue covers (seed 90210 run 296 drew it on
/// `subagents/two_levels_deep` and was failed "never ended" after 8 s, though nothing hung:
/// DSH went on running subagents for 108 s). A burst is never drawn on such a base (that
/// run now draws a plain one: `dsh-sim chaos --seed 90210 --run 296` passes). The plans
/// alone are checked here: a chaos session's judges watch the whole process (its tasks,
/// its panics), so a second session beside `a_fixed_seed_range…` would judge that one's.
#[test]
fn a_burst_is_never_drawn_where_it_multiplies_subagent_chats() -> Result<(), String> {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bases = load_bases(&default_paths(&package.join("../scenarios")))?;
    let burst = select(&["burst".to_owned()])?;
    for index in 0..2000 {
        let planned = plan(90210, index, &bases, &burst);
        let text = std::fs::read_to_string(&planned.base).map_err(|e| e.to_string())?;
        assert!(
            !text.contains("subagent:"),
            "run {index} drew a burst on {}",
            planned.base.display()
        );
    }
    Ok(())
}

fn expect() -> ChaosExpectation {
    ChaosExpectation {
        terminal_bound_ms: 1_000,
    }
}

fn generation(parts: Vec<StreamChunk>, after_ms: Option<u64>) -> GenerationRecord {
    GenerationRecord {
        request: RequestSummary {
            model: "antigravity-acp/server-default".into(),
            system: String::new(),
            history: Vec::new(),
            tools: Vec::new(),
            purpose: "chat".into(),
        },
        parts,
        terminal_after: after_ms.map(Duration::from_millis),
    }
}

fn transcript(generations: Vec<GenerationRecord>, outcome: RunOutcome) -> Transcript {
    Transcript {
        runs: vec![RunRecord {
            user: "hi".into(),
            generations,
            outcome,
        }],
        executions: Default::default(),
    }
}

fn stop() -> StreamChunk {
    StreamChunk::finish(FinishReason::Stop)
}

fn finished() -> RunOutcome {
    RunOutcome::Finished {
        reason: FinishKind::Stop,
    }
}

fn violations(
    transcript: &Transcript,
    journal: &[Vec<JournalEntry>],
    watched: &Watched,
) -> Vec<String> {
    violations_with(transcript, journal, watched, 0, &[])
}

fn violations_with(
    transcript: &Transcript,
    journal: &[Vec<JournalEntry>],
    watched: &Watched,
    live_tasks: usize,
    failures: &[String],
) -> Vec<String> {
    let observed = Observed {
        transcript,
        journal,
        watched,
        secret: Some("S3CR3T"),
        live_tasks,
        failures,
    };
    judge(&expect(), &observed).violations
}

#[test]
fn a_good_run_passes() {
    let good = transcript(vec![generation(vec![stop()], Some(10))], finished());
    assert_eq!(
        violations(&good, &[], &Watched::default()),
        Vec::<String>::new()
    );
}

#[test]
fn two_terminal_chunks_or_none_fail() {
    let twice = transcript(vec![generation(vec![stop(), stop()], Some(10))], finished());
    assert!(violations(&twice, &[], &Watched::default())[0].contains("2 terminal chunks"));
    let never = transcript(vec![generation(Vec::new(), None)], RunOutcome::Unfinished);
    assert_eq!(violations(&never, &[], &Watched::default()).len(), 2);
}

#[test]
fn a_terminal_chunk_past_its_bound_fails() {
    let late = transcript(vec![generation(vec![stop()], Some(1_001))], finished());
    assert!(violations(&late, &[], &Watched::default())[0].contains("past its bound"));
}

#[test]
fn a_broken_stream_contract_fails() {
    let broken = transcript(
        vec![generation(vec![stop()], Some(5))],
        RunOutcome::Violation {
            message: "text-delta after the finish".into(),
        },
    );
    assert!(violations(&broken, &[], &Watched::default())[0].contains("stream contract"));
}

#[test]
fn a_panic_fails() {
    let good = transcript(vec![generation(vec![stop()], Some(10))], finished());
    let watched = Watched {
        panics: vec!["panic on thread tokio-runtime-worker at x.rs:1: boom".into()],
        ..Watched::default()
    };
    assert_eq!(violations(&good, &[], &watched).len(), 1);
}

/// The bridge's MCP name of DSH's `read_file`.
fn mcp_name(name: &str) -> String {
    use sha2::Digest;
    let digest = hex::encode(sha2::Sha256::digest(name.as_bytes()));
    format!("{name}_{}", &digest[..12])
}

/// A `tools/call` of `name` under JSON-RPC id `id`.
fn call_as(name: &str, id: u64) -> JournalEntry {
    JournalEntry::McpRequest {
        server: "dsh".into(),
        method: "tools/call".into(),
        params: json!({"name": mcp_name(name), "arguments": {}}),
        rpc_id: Some(id),
    }
}

fn call(name: &str) -> JournalEntry {
    call_as(name, 1)
}

/// A result for the call under id 1.
fn answer(name: &str) -> JournalEntry {
    JournalEntry::McpResponse {
        server: "dsh".into(),
        method: "tools/call".into(),
        result: Some(json!({"content": []})),
        error: None,
        params: Some(json!({"name": mcp_name(name), "arguments": {}})),
        rpc_id: Some(1),
    }
}

/// A refusal (no result) of the call under id 1.
fn refusal(name: &str) -> JournalEntry {
    JournalEntry::McpResponse {
        server: "dsh".into(),
        method: "tools/call".into(),
        result: None,
        error: Some("JSON-RPC -32600".into()),
        params: Some(json!({"name": mcp_name(name), "arguments": {}})),
        rpc_id: Some(1),
    }
}

#[test]
fn a_tool_run_twice_for_one_call_fails_and_one_run_passes() {
    let mut ran = transcript(vec![generation(vec![stop()], Some(10))], finished());
    ran.executions.insert("read_file".into(), 1);
    let journal = vec![vec![call("read_file"), answer("read_file")]];
    assert!(violations(&ran, &journal, &Watched::default()).is_empty());
    ran.executions.insert("read_file".into(), 2);
    assert!(violations(&ran, &journal, &Watched::default())[0].contains("2 time(s) for 1"));
}

/// The same JSON-RPC id sent twice is one call: two executions for it fail (the bug a
/// bridge without replay refusal has), one execution and a refusal of the copy pass.
#[test]
fn a_request_sent_twice_under_one_id_is_one_call() {
    let mut ran = transcript(vec![generation(vec![stop()], Some(10))], finished());
    ran.executions.insert("read_file".into(), 1);
    let journal = vec![vec![
        call("read_file"),
        call("read_file"),
        answer("read_file"),
        refusal("read_file"),
    ]];
    assert!(violations(&ran, &journal, &Watched::default()).is_empty());
    ran.executions.insert("read_file".into(), 2);
    assert!(violations(&ran, &journal, &Watched::default())[0].contains("2 time(s) for 1"));
    let two_ids = vec![vec![call_as("read_file", 1), call_as("read_file", 2)]];
    assert!(violations(&ran, &two_ids, &Watched::default()).is_empty());
}

#[test]
fn a_call_answered_twice_fails() {
    let good = transcript(vec![generation(vec![stop()], Some(10))], finished());
    let journal = vec![vec![
        call("read_file"),
        answer("read_file"),
        answer("read_file"),
    ]];
    assert!(violations(&good, &journal, &Watched::default())[0].contains("answered 2"));
}

#[test]
fn a_live_task_after_disposal_fails() {
    let good = transcript(vec![generation(vec![stop()], Some(10))], finished());
    let found = violations_with(&good, &[], &Watched::default(), 2, &[]);
    assert!(found[0].contains("2 adapter task(s)"));
}

#[test]
fn the_secret_anywhere_fails() {
    let failure = LlmFailure {
        message: "server said: token S3CR3T".into(),
        code: "ACP_SERVER_ERROR".into(),
        status: None,
        provider_retry_after_ms: None,
        request_id: None,
    };
    let leaked = transcript(
        vec![generation(
            vec![StreamChunk::finish(FinishReason::Error {
                failure: failure.clone(),
            })],
            Some(10),
        )],
        RunOutcome::Failed { failure },
    );
    assert_eq!(violations(&leaked, &[], &Watched::default()).len(), 1);
    let good = transcript(vec![generation(vec![stop()], Some(10))], finished());
    let logged = Watched {
        log_hits: vec!["antigravity_acp: stderr=S3CR3T".into()],
        ..Watched::default()
    };
    assert_eq!(violations(&good, &[], &logged).len(), 1);
    let failures = vec!["listModels failed: S3CR3T".to_owned()];
    assert_eq!(
        violations_with(&good, &[], &Watched::default(), 0, &failures).len(),
        1
    );
}
