//! The model script: what the fake model answers, turn by turn, step by step.
//!
//! Its own serde types (strict: unknown fields are refused), parsed from JSON and checked
//! by [`ModelScript::from_json`]. How steps group into segments (one model response each)
//! lives in the `segments` module.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The whole script: the turns the fake model can play. No turns is the default profile
/// (every prompt is echoed back as one text part).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelScript {
    /// The turns, matched against each request's prompt text in order.
    #[serde(default)]
    pub turns: Vec<ModelTurn>,
}

/// One user turn: the prompt it answers and the steps the model plays.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelTurn {
    /// A substring of the prompt text this turn answers (the turn whose substring occurs
    /// latest wins, see [`crate::choose`]); none matches any prompt, last of all.
    #[serde(default)]
    pub prompt_contains: Option<String>,
    /// The steps, split into segments after each tool call.
    #[serde(default)]
    pub steps: Vec<ModelStep>,
    /// The finish reason of the turn's last response.
    #[serde(default)]
    pub finish: Finish,
}

/// The finish reason the turn's last response carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    /// `STOP`: a normal end.
    #[default]
    Stop,
    /// `MAX_TOKENS`: the output was cut at the token limit.
    MaxTokens,
    /// `SAFETY`: the output was blocked by safety filters.
    Safety,
}

impl Finish {
    /// The Gemini API's `finishReason` value.
    pub fn wire_name(self) -> &'static str {
        match self {
            Finish::Stop => "STOP",
            Finish::MaxTokens => "MAX_TOKENS",
            Finish::Safety => "SAFETY",
        }
    }
}

/// One step of a turn (externally tagged: `{"text": "hi"}`, `{"call": {...}}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ModelStep {
    /// One text part, one event.
    Text(String),
    /// One thought part (`"thought": true`), one event.
    Thought(String),
    /// A text sent as many events of a few code points each.
    Stream(StreamStep),
    /// The `usageMetadata` the segment's last event carries.
    Usage(UsageStep),
    /// One `functionCall` of the agent's declaration for a host tool.
    Call(ToolCall),
    /// Several `functionCall`s in one candidate.
    Parallel(Vec<ToolCall>),
    /// One `functionCall` of the agent's own tool, by its exact declared name.
    Native(NativeCall),
    /// A check on the `functionResponse`s the agent sends back for the previous call.
    ExpectResult(ExpectResult),
    /// Hold the stream open until the agent drops the request; if no drop comes within the
    /// bound, an expectation failure is journaled and the steps after it play (as the ACP
    /// fake goes on after its own `wait_for_cancel`).
    WaitForCancel(WaitForCancel),
}

/// A text streamed in pieces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamStep {
    /// The whole text.
    pub text: String,
    /// Code points per event (at least 1).
    #[serde(default = "one")]
    pub code_points: usize,
    /// Milliseconds between events.
    #[serde(default)]
    pub interval_ms: u64,
}

fn one() -> usize {
    1
}

/// Token counts reported in `usageMetadata`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageStep {
    /// `promptTokenCount`.
    pub prompt_tokens: u64,
    /// `candidatesTokenCount`.
    pub candidates_tokens: u64,
}

/// A call of a host tool, named as DSH names it (`read_file`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The host tool's name; resolved to the agent's declaration (see the `resolve` module).
    pub tool: String,
    /// The call's arguments (a JSON object).
    #[serde(default = "empty_object")]
    pub args: Value,
}

/// A call of one of the agent's own tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NativeCall {
    /// The exact declared function name.
    pub name: String,
    /// The call's arguments (a JSON object).
    #[serde(default = "empty_object")]
    pub args: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// What every `functionResponse` sent back for the previous call must satisfy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectResult {
    /// `true`: the response has an `error` key or an `isError: true`; `false`: neither.
    #[serde(default)]
    pub is_error: Option<bool>,
    /// A substring of the response (its JSON text, or one of its strings).
    #[serde(default)]
    pub contains: Option<String>,
}

/// How long to hold the stream for the agent's cancel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForCancel {
    /// The bound, in milliseconds.
    #[serde(default = "ten_seconds")]
    pub timeout_ms: u64,
}

fn ten_seconds() -> u64 {
    10_000
}

/// A script that does not parse or does not check.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The JSON does not match the script's shape.
    #[error("the model script does not parse: {0}")]
    Parse(#[from] serde_json::Error),
    /// A step is out of place or out of range.
    #[error("the model script does not check: turn {turn} step {step}: {reason}")]
    Check {
        /// The turn's index.
        turn: usize,
        /// The step's index in the turn.
        step: usize,
        /// What is wrong.
        reason: String,
    },
}

impl ModelScript {
    /// Parses and checks a script from its JSON text.
    pub fn from_json(text: &str) -> Result<Self, ScriptError> {
        let script: ModelScript = serde_json::from_str(text)?;
        script.check()?;
        Ok(script)
    }

    /// The JSON Schema of the script format.
    pub fn json_schema() -> Value {
        serde_json::to_value(schemars::schema_for!(ModelScript)).unwrap_or(Value::Null)
    }

    /// Checks what serde cannot: ranges and where steps may stand.
    pub fn check(&self) -> Result<(), ScriptError> {
        for (turn_index, turn) in self.turns.iter().enumerate() {
            check_turn(turn_index, turn)?;
        }
        Ok(())
    }
}

fn check_turn(turn: usize, model_turn: &ModelTurn) -> Result<(), ScriptError> {
    let fail = |step: usize, reason: &str| ScriptError::Check {
        turn,
        step,
        reason: reason.to_owned(),
    };
    let mut previous: Option<&ModelStep> = None;
    for (step, model_step) in model_turn.steps.iter().enumerate() {
        match model_step {
            ModelStep::Stream(stream) if stream.code_points == 0 => {
                return Err(fail(step, "stream.code_points must be at least 1"));
            }
            ModelStep::Parallel(calls) if calls.is_empty() => {
                return Err(fail(step, "parallel needs at least one call"));
            }
            ModelStep::Call(ToolCall { args, .. }) | ModelStep::Native(NativeCall { args, .. })
                if !args.is_object() =>
            {
                return Err(fail(step, "args must be a JSON object"));
            }
            ModelStep::Parallel(calls) if calls.iter().any(|call| !call.args.is_object()) => {
                return Err(fail(step, "args must be a JSON object"));
            }
            ModelStep::ExpectResult(_) if !follows_a_call(previous) => {
                return Err(fail(
                    step,
                    "expect_result must follow a call, parallel, native or expect_result step",
                ));
            }
            _ => {}
        }
        previous = Some(model_step);
    }
    Ok(())
}

fn follows_a_call(previous: Option<&ModelStep>) -> bool {
    matches!(
        previous,
        Some(
            ModelStep::Call(_)
                | ModelStep::Parallel(_)
                | ModelStep::Native(_)
                | ModelStep::ExpectResult(_)
        )
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn steps_parse_externally_tagged_with_defaults() {
        let script = ModelScript::from_json(
            r#"{"turns": [{"prompt_contains": "x", "steps": [
                {"stream": {"text": "abc"}},
                {"call": {"tool": "read_file"}},
                {"expect_result": {"contains": "ok"}},
                {"wait_for_cancel": {}}
            ]}]}"#,
        )
        .unwrap();
        let steps = &script.turns[0].steps;
        assert_eq!(
            steps[0],
            ModelStep::Stream(StreamStep {
                text: "abc".into(),
                code_points: 1,
                interval_ms: 0
            })
        );
        assert_eq!(
            steps[1],
            ModelStep::Call(ToolCall {
                tool: "read_file".into(),
                args: json!({})
            })
        );
        assert_eq!(
            steps[3],
            ModelStep::WaitForCancel(WaitForCancel { timeout_ms: 10_000 })
        );
        assert_eq!(script.turns[0].finish, Finish::Stop);
        assert_eq!(
            ModelScript::from_json("{}").unwrap(),
            ModelScript::default()
        );
    }

    #[test]
    fn unknown_fields_and_misplaced_steps_are_refused() {
        let refused = [
            r#"{"turns": [], "extra": 1}"#,
            r#"{"turns": [{"steps": [{"text": "a", "thought": "b"}]}]}"#,
            r#"{"turns": [{"steps": [{"call": {"tool": "t", "argz": {}}}]}]}"#,
            r#"{"turns": [{"steps": [{"text": "a"}, {"expect_result": {}}]}]}"#,
            r#"{"turns": [{"steps": [{"parallel": []}]}]}"#,
            r#"{"turns": [{"steps": [{"native": {"name": "n", "args": [1]}}]}]}"#,
        ];
        for text in refused {
            assert!(ModelScript::from_json(text).is_err(), "{text}");
        }
    }

    #[test]
    fn the_schema_names_every_step() {
        let schema = ModelScript::json_schema().to_string();
        for step in [
            "stream",
            "parallel",
            "native",
            "expect_result",
            "wait_for_cancel",
        ] {
            assert!(schema.contains(step), "{step}");
        }
    }
}
