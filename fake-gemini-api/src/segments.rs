//! Splitting a turn's steps into segments: one segment per model response.
//!
//! A segment ends right after a step that makes the model call a function (`call`,
//! `parallel`, or a `native` the agent declared), because the agent then runs the call
//! and comes back with a new request. A `native` the agent did not declare is withheld
//! (a real model can only call declared tools): it plays nothing and does not end its
//! segment, and the `expect_result` steps right after it are withheld with it. The split
//! depends on the request's declarations, so it is recomputed per request (stateless).

use crate::script::{ModelStep, ModelTurn};

/// One step of a segment, with its index in the turn.
#[derive(Debug, Clone, Copy)]
pub struct PlacedStep<'a> {
    /// The step's index in the turn's `steps`.
    pub index: usize,
    /// The step.
    pub step: &'a ModelStep,
    /// Withheld: a `native` the agent did not declare, or a check of its result.
    pub withheld: bool,
}

/// A turn's steps split into segments; segment k answers the request that follows the
/// k-th function call of the turn.
pub fn split_segments<'a>(turn: &'a ModelTurn, declared: &[&str]) -> Vec<Vec<PlacedStep<'a>>> {
    let mut segments = Vec::new();
    let mut current = Vec::new();
    let mut after_withheld = false;
    for (index, step) in turn.steps.iter().enumerate() {
        let withheld = match step {
            ModelStep::Native(native) => !declared.contains(&native.name.as_str()),
            ModelStep::ExpectResult(_) => after_withheld,
            _ => false,
        };
        after_withheld = withheld;
        let ends_segment = !withheld
            && matches!(
                step,
                ModelStep::Call(_) | ModelStep::Parallel(_) | ModelStep::Native(_)
            );
        current.push(PlacedStep {
            index,
            step,
            withheld,
        });
        if ends_segment {
            segments.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() || segments.is_empty() {
        segments.push(current);
    }
    segments
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::{ExpectResult, NativeCall, ToolCall};
    use serde_json::json;

    fn turn(steps: Vec<ModelStep>) -> ModelTurn {
        ModelTurn {
            steps,
            ..ModelTurn::default()
        }
    }

    fn call(tool: &str) -> ModelStep {
        ModelStep::Call(ToolCall {
            tool: tool.into(),
            args: json!({}),
        })
    }

    #[test]
    fn segments_end_after_calls_and_declared_natives() {
        let script = turn(vec![
            ModelStep::Text("a".into()),
            call("read_file"),
            ModelStep::ExpectResult(ExpectResult::default()),
            ModelStep::Native(NativeCall {
                name: "run_shell_command".into(),
                args: json!({}),
            }),
            ModelStep::Text("done".into()),
        ]);
        let lengths: Vec<usize> = split_segments(&script, &["run_shell_command"])
            .iter()
            .map(Vec::len)
            .collect();
        assert_eq!(lengths, vec![2, 2, 1]);
    }

    #[test]
    fn a_withheld_native_and_its_checks_stay_in_their_segment() {
        let script = turn(vec![
            ModelStep::Native(NativeCall {
                name: "run_shell_command".into(),
                args: json!({}),
            }),
            ModelStep::ExpectResult(ExpectResult::default()),
            ModelStep::Text("done".into()),
        ]);
        let segments = split_segments(&script, &[]);
        assert_eq!(segments.len(), 1);
        let withheld: Vec<bool> = segments[0].iter().map(|step| step.withheld).collect();
        assert_eq!(withheld, vec![true, true, false]);
    }

    #[test]
    fn a_turn_ending_in_a_call_has_no_segment_after_it() {
        let script = turn(vec![call("read_file")]);
        assert_eq!(split_segments(&script, &[]).len(), 1);
        assert_eq!(split_segments(&turn(vec![]), &[]).len(), 1);
    }
}
