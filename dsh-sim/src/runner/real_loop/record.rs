//! The real-loop driver's record read back as dsh-sim's [`Transcript`]: each chat
//! request as DSH's loop sent it (summarised by the same [`RequestSummary::of`]), each
//! chunk it consumed, and how each turn ended, mapped to the [`RunOutcome`] dsh-sim's
//! loop would have recorded; every stream held to the same [`StreamValidator`]. Also the
//! queries after the chat (`expect.models_listed`, `expect.context_window`), judged with
//! dsh-sim's messages.

use std::collections::BTreeMap;

use antigravity_acp::contract::{FinishReason, GenerateOptions, StreamChunk};
use serde::Deserialize;
use serde_json::Value;

use crate::host::agent_loop::stopped_by_user;
use crate::host::stream_rules::{Progress, StreamValidator, describe};
use crate::host::transcript::{
    GenerationRecord, RequestSummary, RunOutcome, RunRecord, Transcript,
};
use crate::scenario::FinishKind;
use crate::scenario::Scenario;

/// What the driver writes (`driver.mjs`'s `record`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DriverRecord {
    runs: Vec<DriverRun>,
    #[serde(default)]
    executions: BTreeMap<String, u32>,
    #[serde(default)]
    host_errors: Vec<String>,
    #[serde(default)]
    models_listed: Option<Vec<String>>,
    #[serde(default)]
    context_window: Option<u64>,
}

/// One user message's turn.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DriverRun {
    user: String,
    generations: Vec<DriverGeneration>,
    /// `turn/end`'s `reason` (`{kind: completed | error | aborted | …}`), if the turn ended.
    #[serde(default)]
    turn_end: Option<Value>,
    /// What `agent/error` reported during the turn.
    #[serde(default)]
    errors: Vec<String>,
    /// DSH cancelled the turn at a `tool-calls` finish (`abort: on_tool_calls`).
    #[serde(default)]
    aborted_on_tool_calls: bool,
    /// DSH cancelled the turn after the first delta (`abort: on_first_delta`).
    #[serde(default)]
    aborted_by_user: bool,
}

/// One stream DSH's loop consumed.
#[derive(Debug, Deserialize)]
struct DriverGeneration {
    request: Value,
    parts: Vec<StreamChunk>,
}

/// The transcript, and what the record alone fails.
pub struct Judged {
    /// The chat as DSH's loop saw it.
    pub transcript: Transcript,
    /// Failures the record shows beside the transcript's expectations.
    pub failures: Vec<String>,
}

/// Reads the driver's record (JSON `text`) for `scenario`.
pub fn judge_record(text: &str, scenario: &Scenario) -> Result<Judged, String> {
    let record: DriverRecord = serde_json::from_str(text)
        .map_err(|e| format!("the real loop's record is not its shape: {e}"))?;
    let mut failures = record.host_errors.clone();
    let mut transcript = Transcript {
        runs: Vec::new(),
        executions: record.executions,
    };
    for mut run in record.runs {
        let mut generations = Vec::new();
        for generation in std::mem::take(&mut run.generations) {
            let request: GenerateOptions = serde_json::from_value(generation.request)
                .map_err(|e| format!("DSH's loop sent a request dsh-sim cannot read: {e}"))?;
            generations.push(GenerationRecord {
                request: RequestSummary::of(&request),
                parts: generation.parts,
                // DSH's loop records no timing; chaos never runs under it.
                terminal_after: None,
            });
        }
        let outcome = outcome(&generations, &run);
        transcript.runs.push(RunRecord {
            user: std::mem::take(&mut run.user),
            generations,
            outcome,
        });
    }
    if let Some(expected) = &scenario.expect.models_listed {
        match &record.models_listed {
            Some(listed) if listed == expected => {}
            Some(listed) => failures.push(format!(
                "models listed: expected {expected:?}, observed {listed:?}"
            )),
            None => {}
        }
    }
    if let Some(expected) = scenario.expect.context_window
        && record.context_window != Some(expected)
    {
        failures.push(format!(
            "resolveModel's context window: expected {expected}, observed {:?}",
            record.context_window
        ));
    }
    Ok(Judged {
        transcript,
        failures,
    })
}

/// How a turn ended, as dsh-sim's loop records it: the stream rules first, then the last
/// stream's finish read with the turn's end.
fn outcome(generations: &[GenerationRecord], run: &DriverRun) -> RunOutcome {
    let end_kind = run
        .turn_end
        .as_ref()
        .and_then(|end| end.get("kind"))
        .and_then(Value::as_str)
        .unwrap_or("none");
    // The user stopped the run mid-stream: DSH's loop took no chunk after the abort, so the
    // last stream is a prefix (its finish never taken).
    let stopped = run.aborted_by_user && end_kind == "aborted";
    for (n, generation) in generations.iter().enumerate() {
        let prefix_only = stopped && n + 1 == generations.len();
        if let Err(message) = validate(&generation.parts, prefix_only) {
            return RunOutcome::Violation { message };
        }
    }
    let host_failure = |what: &str| RunOutcome::HostFailure {
        message: format!(
            "{what} (DSH's turn/end: {}; agent errors: {:?})",
            run.turn_end
                .as_ref()
                .map_or_else(|| "none".to_owned(), Value::to_string),
            run.errors
        ),
    };
    let Some(last) = generations.last() else {
        return host_failure("DSH's loop made no request");
    };
    let finish = last.parts.iter().rev().find_map(|part| match part {
        StreamChunk::Finish { reason, .. } => Some(reason.clone()),
        _ => None,
    });
    match finish {
        Some(FinishReason::Error { failure }) => RunOutcome::Failed { failure },
        Some(FinishReason::Aborted { failure }) => RunOutcome::Aborted { failure },
        Some(FinishReason::ToolCalls) if run.aborted_on_tool_calls && end_kind == "aborted" => {
            RunOutcome::AbortedWithToolsPending
        }
        Some(FinishReason::ToolCalls) => host_failure("the turn ended after a tool-calls finish"),
        Some(reason @ FinishReason::Stop) if end_kind == "completed" => RunOutcome::Finished {
            reason: FinishKind::of(&reason),
        },
        Some(reason @ FinishReason::MaxTokens) if end_kind == "max-tokens" => {
            RunOutcome::Finished {
                reason: FinishKind::of(&reason),
            }
        }
        Some(_) => host_failure("the turn did not end as its last finish says"),
        None if stopped => RunOutcome::Aborted {
            failure: stopped_by_user(),
        },
        None => host_failure("the last stream had no finish"),
    }
}

/// The stream rules dsh-sim's loop holds every generation to (`prefix_only`: a stream DSH
/// stopped reading, whose end is not judged).
fn validate(parts: &[StreamChunk], prefix_only: bool) -> Result<(), String> {
    let mut validator = StreamValidator::new();
    let mut chunks = parts.iter();
    for chunk in chunks.by_ref() {
        if validator.observe(chunk)? == Progress::Terminal {
            return match chunks.next() {
                Some(extra) => Err(format!("{} after the terminal item", describe(extra))),
                None => Ok(()),
            };
        }
    }
    if prefix_only {
        return Ok(());
    }
    validator.end_of_stream()
}
