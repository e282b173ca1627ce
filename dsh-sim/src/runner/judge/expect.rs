//! Judging a scenario's DSH-side expectations (`expect.finish`, `error`,
//! `error_message_contains`, `generations`, `executions`, `final_text`, `streams`) against
//! the transcript of the chat.

use crate::host::transcript::{RunOutcome, Transcript, summarize, visible_text};
use crate::scenario::Expectations;
use crate::scenario::FinishKind;

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

/// Earlier runs must finish (an `aborted` finish counts); the last one must end as
/// `finish`/`error` say. An `error` finish, protocol violations and host failures always
/// fail unless expected.
fn check_outcomes(expect: &Expectations, transcript: &Transcript, failures: &mut Vec<String>) {
    let Some((last, earlier)) = transcript.runs.split_last() else {
        failures.push("no user message was run".to_owned());
        return;
    };
    for (i, run) in earlier.iter().enumerate() {
        if !matches!(
            run.outcome,
            RunOutcome::Finished { .. }
                | RunOutcome::Aborted { .. }
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
    let (kind, failure) = match &last.outcome {
        RunOutcome::Finished { reason } => (Some(*reason), None),
        RunOutcome::Aborted { failure } => (Some(FinishKind::Aborted), Some(failure)),
        RunOutcome::Failed { failure } => (Some(FinishKind::Error), Some(failure)),
        RunOutcome::AbortedWithToolsPending => (Some(FinishKind::ToolCalls), None),
        _ => (None, None),
    };
    if let Some(code) = expect.error
        && failure.is_none_or(|f| f.code != code.as_str())
    {
        failures.push(format!(
            "expected the last run to fail with `{code}`, it ended with {}",
            last.outcome
        ));
        return;
    }
    if let Some(text) = &expect.error_message_contains
        && failure.is_none_or(|f| !f.message.contains(text.as_str()))
    {
        failures.push(format!(
            "expected the last run's failure message to contain {text:?}, it ended with {}",
            last.outcome
        ));
    }
    let dropped_as_expected =
        matches!(last.outcome, RunOutcome::DroppedByDsh) && expect.finish.is_none();
    match (kind, expect.finish) {
        (Some(kind), Some(expected)) if kind != expected => failures.push(format!(
            "expected finish({}), the last run ended with {}",
            expected.name(),
            last.outcome
        )),
        (Some(FinishKind::Error), None) if expect.error.is_none() => {
            failures.push(format!("the last run ended with {}", last.outcome));
        }
        (Some(_), _) => {}
        (None, _) if dropped_as_expected => {}
        (None, _) => failures.push(format!("the last run ended with {}", last.outcome)),
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
