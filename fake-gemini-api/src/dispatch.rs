//! Deciding what a main-agent request gets: which turn, which segment, which checks,
//! which plan — or why it is unscripted.

use crate::expect::check_results;
use crate::locate::{locate, summarize};
use crate::plan::{Plan, PlanItem, build_plan};
use crate::request::GenerateContentRequest;
use crate::script::{Finish, ModelScript, ModelStep};
use crate::segments::split_segments;
use crate::wire::text_part;

/// What a request plays.
#[derive(Debug, Clone, PartialEq)]
pub struct Play {
    /// The turn's index (none for the default echo).
    pub turn: Option<usize>,
    /// The segment of the turn.
    pub segment: usize,
    /// The parts, pauses and holds to send.
    pub plan: Plan,
    /// The `expect_result` checks that failed: the step's index and why.
    pub failed_checks: Vec<(usize, String)>,
    /// The finish reason of the response.
    pub finish: Finish,
}

/// Decides the request's play, or says why it is unscripted (the text names the turn and
/// step and summarizes the request).
pub fn decide(
    script: &ModelScript,
    request: &GenerateContentRequest,
    streaming: bool,
) -> Result<Play, String> {
    let summary = summarize(request);
    let Some(position) = locate(request) else {
        return Err(format!(
            "no prompt: no user content has text without a functionResponse (turn none, \
             step none); {summary}"
        ));
    };
    if script.turns.is_empty() {
        return Ok(echo(&position.prompt_text, position.segment));
    }
    let Some((turn_index, turn)) = crate::choose::choose_turn(&script.turns, &position.prompt_text)
        .and_then(|index| Some((index, script.turns.get(index)?)))
    else {
        return Err(format!(
            "no turn's prompt_contains is in the prompt ({} turns; turn none, step none); \
             {summary}",
            script.turns.len()
        ));
    };
    let declared = request.declared_names();
    let segments = split_segments(turn, &declared);
    let Some(steps) = segments.get(position.segment) else {
        return Err(format!(
            "turn {turn_index} has {} segments but the request is on segment {} (turn \
             {turn_index}, step {} of {}: past the last step); {summary}",
            segments.len(),
            position.segment,
            turn.steps.len(),
            turn.steps.len(),
        ));
    };
    let failed_checks = if position.segment > 0 {
        steps
            .iter()
            .take_while(|placed| matches!(placed.step, ModelStep::ExpectResult(_)))
            .filter(|placed| !placed.withheld)
            .filter_map(|placed| match placed.step {
                ModelStep::ExpectResult(expect) => check_results(expect, &position.responses)
                    .err()
                    .map(|reason| (placed.index, reason)),
                _ => None,
            })
            .collect()
    } else {
        Vec::new()
    };
    let plan = build_plan(steps, &declared, streaming).map_err(|failure| {
        format!(
            "turn {turn_index} step {} (segment {}): {}; {summary}",
            failure.step, position.segment, failure.reason
        )
    })?;
    let is_last_segment = position.segment + 1 == segments.len();
    Ok(Play {
        turn: Some(turn_index),
        segment: position.segment,
        plan,
        failed_checks,
        finish: if is_last_segment {
            turn.finish
        } else {
            Finish::Stop
        },
    })
}

/// The default profile: the prompt's text back as one text part.
fn echo(prompt_text: &str, segment: usize) -> Play {
    Play {
        turn: None,
        segment,
        plan: Plan {
            items: vec![PlanItem::Parts(vec![text_part(prompt_text)])],
            steps: vec!["echo".to_owned()],
            output_chars: prompt_text.chars().count(),
            ..Plan::default()
        },
        failed_checks: Vec::new(),
        finish: Finish::Stop,
    }
}
