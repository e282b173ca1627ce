//! Judging a scenario's DSH-side expectations (`expect.finish`, `error`, `generations`,
//! `executions`, `final_text`, `streams`) against the transcript of the chat.

use antigravity_acp::contract::FinishReason;

use crate::host::transcript::{RunOutcome, Transcript, finish_name, summarize, visible_text};
use crate::scenario::Expectations;

/// Every DSH-side expectation that does not hold, as readable sentences.
pub fn check_transcript(expect: &Expectations, transcript: &Transcript) -> Vec<String> {
    let mut failures = Vec::new();
    check_outcomes(expect, transcript, &mut failures);
    let generations: Vec<_> = transcript.generations().collect();
    if let Some(expected) = &expect.model {
        for (n, generation) in generations.iter().enumerate() {
            if &generation.request.model != expected {
                failures.push(format!(
                    "generation {} asked for model {}, expected {expected}",
                    n + 1,
                    generation.request.model
                ));
            }
        }
    }
    if let Some(expected) = expect.generations
        && expected != generations.len()
    {
        failures.push(format!(
            "expected {expected} generation(s), DSH made {}",
            generations.len()
        ));
    }
    for (tool, expected) in &expect.executions {
        let actual = transcript.executions.get(tool).copied().unwrap_or(0);
        if actual != *expected {
            failures.push(format!(
                "expected {expected} execution(s) of `{tool}`, DSH ran it {actual} time(s)"
            ));
        }
    }
    if let Some(expected) = &expect.final_text {
        let actual = generations
            .last()
            .map(|g| visible_text(&g.parts))
            .unwrap_or_default();
        if &actual != expected {
            failures.push(format!("final text: expected {expected:?}, got {actual:?}"));
        }
    }
    if let Some(expected) = &expect.streams {
        let actual: Vec<Vec<String>> = generations.iter().map(|g| summarize(&g.parts)).collect();
        if &actual != expected {
            failures.push(format!(
                "streams differ.\n  expected:\n{}\n  observed:\n{}",
                render_streams(expected),
                render_streams(&actual)
            ));
        }
    }
    failures
}

/// Earlier runs must finish; the last one must end as `finish`/`error` say. Protocol
/// violations and host failures always fail.
fn check_outcomes(expect: &Expectations, transcript: &Transcript, failures: &mut Vec<String>) {
    let Some((last, earlier)) = transcript.runs.split_last() else {
        failures.push("no user message was run".to_owned());
        return;
    };
    for (i, run) in earlier.iter().enumerate() {
        if !matches!(
            run.outcome,
            RunOutcome::Finished { .. }
                | RunOutcome::AbortedWithToolsPending
                | RunOutcome::DroppedByDsh
        ) {
            failures.push(format!(
                "run {} ({:?}) ended with {}",
                i + 1,
                run.user,
                run.outcome
            ));
        }
    }
    match (&last.outcome, expect.error, expect.finish) {
        (RunOutcome::Failed { error }, Some(code), _) if error.code == code => {}
        (outcome, Some(code), _) => failures.push(format!(
            "expected the last run to fail with `{code}`, it ended with {outcome}"
        )),
        (RunOutcome::Finished { reason }, None, Some(expected)) if *reason != expected => {
            failures.push(format!(
                "expected finish({}), the last run ended with finish({})",
                finish_name(expected),
                finish_name(*reason)
            ));
        }
        (RunOutcome::Finished { .. }, None, _) => {}
        (RunOutcome::AbortedWithToolsPending, None, None | Some(FinishReason::ToolCalls)) => {}
        (RunOutcome::DroppedByDsh, None, None) => {}
        (outcome, None, _) => failures.push(format!("the last run ended with {outcome}")),
    }
}

/// Streams as YAML a contributor can paste under `expect.streams`.
fn render_streams(streams: &[Vec<String>]) -> String {
    let mut out = String::new();
    for stream in streams {
        let mut first = true;
        for line in stream {
            let dash = if first { "- - " } else { "  - " };
            first = false;
            let quoted = serde_json::to_string(line).unwrap_or_else(|_| line.clone());
            out.push_str(&format!("    {dash}{quoted}\n"));
        }
        if stream.is_empty() {
            out.push_str("    - []\n");
        }
    }
    out.trim_end().to_owned()
}
