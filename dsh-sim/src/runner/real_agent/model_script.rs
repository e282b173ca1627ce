//! A scenario's `fake.turns` as the scripted model API's script: the same steps, played
//! by the model instead of the server. `text` and `stream` become text parts, `thought` a
//! thought part, `usage` the usage metadata, `call` and `parallel` `functionCall`s of the
//! agent's declaration for DSH's tool, `native` a `functionCall` of the agent's own tool
//! ([`AgentKind::native_call`]), `expect_result` a check of the `functionResponse` that
//! comes back, `wait_for_cancel` a stream held open until the agent drops it. The stop
//! reason becomes the finish reason. Anything else keeps a scenario on the fake
//! (`scenario::agent_fit`), so meeting it here is an error.

use fake_antigravity::script::{CallStep, Script, Step, StopScript, TurnScript};
use fake_gemini_api::ModelScript;
use serde_json::{Value, json};

use super::agent_kind::AgentKind;

/// The model API's script for `fake` under `agent`.
pub fn model_script(agent: AgentKind, fake: &Script) -> Result<ModelScript, String> {
    let turns = fake
        .turns
        .iter()
        .map(|turn| model_turn(agent, turn))
        .collect::<Result<Vec<_>, _>>()?;
    serde_json::from_value(json!({ "turns": turns }))
        .map_err(|e| format!("the model API refused the translated script: {e}"))
}

fn model_turn(agent: AgentKind, turn: &TurnScript) -> Result<Value, String> {
    let steps = turn
        .steps
        .iter()
        .map(|step| model_step(agent, step))
        .collect::<Result<Vec<_>, _>>()?;
    let finish = match turn.stop {
        StopScript::EndTurn => "stop",
        StopScript::MaxTokens => "max_tokens",
        StopScript::Refusal => "safety",
    };
    let mut out = json!({ "steps": steps, "finish": finish });
    if let Some(text) = &turn.matcher.prompt_contains {
        out["prompt_contains"] = json!(text);
    }
    Ok(out)
}

fn call(step: &CallStep) -> Value {
    json!({ "tool": step.tool, "args": step.args })
}

fn model_step(agent: AgentKind, step: &Step) -> Result<Value, String> {
    Ok(match step {
        Step::Text(text) => json!({ "text": text }),
        Step::Thought(text) => json!({ "thought": text }),
        Step::Stream(stream) => json!({ "stream": {
            "text": stream.text,
            "code_points": stream.code_points,
            "interval_ms": stream.interval_ms,
        }}),
        Step::Usage(usage) => json!({ "usage": {
            "prompt_tokens": usage.used,
            "candidates_tokens": 0,
        }}),
        Step::Call(step) => json!({ "call": call(step) }),
        Step::Parallel(steps) => json!({ "parallel": steps.iter().map(call).collect::<Vec<_>>() }),
        Step::ExpectResult(expect) if expect.failed_with.is_none() => json!({ "expect_result": {
            "is_error": expect.is_error,
            "contains": expect.contains,
        }}),
        Step::Native(native) => {
            let (name, args) = agent.native_call(
                &native.tool,
                native.kind,
                native.path.as_deref(),
                &native.content,
            );
            json!({ "native": { "name": name, "args": args } })
        }
        Step::WaitForCancel(wait) => {
            json!({ "wait_for_cancel": { "timeout_ms": wait.timeout_ms } })
        }
        other => {
            return Err(format!(
                "a real agent cannot play the step {other:?}: the scenario needs `fake_only`"
            ));
        }
    })
}
