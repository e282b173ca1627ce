//! Turning one segment's steps into what the response sends: parts, pauses, a hold.
//!
//! Built whole before the response starts, so a tool name that does not resolve fails
//! the request with an error instead of breaking a stream half-way.

use std::time::Duration;

use serde_json::Value;

use crate::resolve::resolve_tool;
use crate::script::{ModelStep, ToolCall};
use crate::segments::PlacedStep;
use crate::wire::{Usage, function_call_part, text_part, thought_part};

/// One thing the response does, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanItem {
    /// Parts sent together (one SSE event when streaming).
    Parts(Vec<Value>),
    /// A pause before the next event.
    Pause(Duration),
    /// Hold the response open until the client drops it or the bound passes.
    WaitForCancel {
        /// The step's index in the turn.
        step: usize,
        /// The bound.
        timeout: Duration,
    },
}

/// What one segment plays.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// The items, in order.
    pub items: Vec<PlanItem>,
    /// The scripted usage, if a `usage` step set it.
    pub usage: Option<Usage>,
    /// Short descriptions of the steps played.
    pub steps: Vec<String>,
    /// The declared function names called.
    pub function_calls: Vec<String>,
    /// The `native` names withheld because the agent did not declare them.
    pub withheld: Vec<String>,
    /// Characters of text and thought output (for the usage estimate).
    pub output_chars: usize,
}

/// A step that cannot be played against this request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanFailure {
    /// The step's index in the turn.
    pub step: usize,
    /// Why.
    pub reason: String,
}

/// Builds the plan of a segment; `streaming` splits `stream` steps into events.
pub fn build_plan(
    steps: &[PlacedStep<'_>],
    declared: &[&str],
    streaming: bool,
) -> Result<Plan, PlanFailure> {
    let mut plan = Plan::default();
    for placed in steps {
        if placed.withheld {
            if let ModelStep::Native(native) = placed.step {
                plan.withheld.push(native.name.clone());
            }
            continue;
        }
        add_step(&mut plan, placed, declared, streaming)?;
    }
    Ok(plan)
}

fn add_step(
    plan: &mut Plan,
    placed: &PlacedStep<'_>,
    declared: &[&str],
    streaming: bool,
) -> Result<(), PlanFailure> {
    let index = placed.index;
    let description = match placed.step {
        ModelStep::Text(text) => {
            plan.output_chars += text.chars().count();
            plan.items.push(PlanItem::Parts(vec![text_part(text)]));
            format!("#{index} text ({} chars)", text.chars().count())
        }
        ModelStep::Thought(text) => {
            plan.output_chars += text.chars().count();
            plan.items.push(PlanItem::Parts(vec![thought_part(text)]));
            format!("#{index} thought ({} chars)", text.chars().count())
        }
        ModelStep::Stream(stream) => {
            let chars: Vec<char> = stream.text.chars().collect();
            plan.output_chars += chars.len();
            if !streaming {
                plan.items
                    .push(PlanItem::Parts(vec![text_part(&stream.text)]));
            }
            let pieces: Vec<String> = if streaming {
                chars
                    .chunks(stream.code_points.max(1))
                    .map(|piece| piece.iter().collect())
                    .collect()
            } else {
                Vec::new()
            };
            for (number, piece) in pieces.iter().enumerate() {
                if number > 0 && stream.interval_ms > 0 {
                    plan.items
                        .push(PlanItem::Pause(Duration::from_millis(stream.interval_ms)));
                }
                plan.items.push(PlanItem::Parts(vec![text_part(piece)]));
            }
            format!("#{index} stream ({} chars)", chars.len())
        }
        ModelStep::Usage(usage) => {
            plan.usage = Some(Usage {
                prompt_tokens: usage.prompt_tokens,
                candidates_tokens: usage.candidates_tokens,
            });
            format!("#{index} usage")
        }
        ModelStep::Call(call) => {
            let part = resolved_call(plan, index, call, declared)?;
            plan.items.push(PlanItem::Parts(vec![part]));
            format!("#{index} call {}", call.tool)
        }
        ModelStep::Parallel(calls) => {
            let parts = calls
                .iter()
                .map(|call| resolved_call(plan, index, call, declared))
                .collect::<Result<Vec<_>, _>>()?;
            plan.items.push(PlanItem::Parts(parts));
            let tools: Vec<&str> = calls.iter().map(|call| call.tool.as_str()).collect();
            format!("#{index} parallel [{}]", tools.join(", "))
        }
        ModelStep::Native(native) => {
            plan.function_calls.push(native.name.clone());
            plan.items.push(PlanItem::Parts(vec![function_call_part(
                &native.name,
                &native.args,
            )]));
            format!("#{index} native {}", native.name)
        }
        ModelStep::ExpectResult(_) => format!("#{index} expect_result"),
        ModelStep::WaitForCancel(wait) => {
            plan.items.push(PlanItem::WaitForCancel {
                step: index,
                timeout: Duration::from_millis(wait.timeout_ms),
            });
            format!("#{index} wait_for_cancel")
        }
    };
    plan.steps.push(description);
    Ok(())
}

fn resolved_call(
    plan: &mut Plan,
    index: usize,
    call: &ToolCall,
    declared: &[&str],
) -> Result<Value, PlanFailure> {
    let name = resolve_tool(&call.tool, declared).map_err(|error| PlanFailure {
        step: index,
        reason: error.to_string(),
    })?;
    plan.function_calls.push(name.to_owned());
    Ok(function_call_part(name, &call.args))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::script::StreamStep;
    use serde_json::json;

    #[test]
    fn a_stream_pauses_between_its_events_and_is_whole_when_not_streaming() {
        let step = ModelStep::Stream(StreamStep {
            text: "abc".into(),
            code_points: 2,
            interval_ms: 5,
        });
        let placed = [PlacedStep {
            index: 0,
            step: &step,
            withheld: false,
        }];
        let streamed = build_plan(&placed, &[], true).unwrap();
        assert_eq!(
            streamed.items,
            vec![
                PlanItem::Parts(vec![json!({"text": "ab"})]),
                PlanItem::Pause(Duration::from_millis(5)),
                PlanItem::Parts(vec![json!({"text": "c"})]),
            ]
        );
        let whole = build_plan(&placed, &[], false).unwrap();
        assert_eq!(
            whole.items,
            vec![PlanItem::Parts(vec![json!({"text": "abc"})])]
        );
        assert_eq!(whole.output_chars, 3);
    }
}
