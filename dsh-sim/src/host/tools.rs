//! DSH's tools in miniature: each has a definition offered to the model, DSH's own
//! permission policy, and a scripted outcome. Running one is how DSH stays in control of
//! execution (C17): an allowed call produces its scripted output, a denied one an error
//! result, and only allowed calls count as executions.

use antigravity_acp::contract::{ContentBlock, Message, ToolCallBlock, ToolSchema};
use serde_json::Value;

use crate::scenario::{Permission, ToolSpec};

/// The output of every denied call.
pub const PERMISSION_DENIED: &str = "permission denied by DSH";

/// What an allowed execution of a tool yields.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolBehaviour {
    /// It succeeds with this output.
    Output(Value),
    /// It runs but fails with this text.
    Fails(String),
    /// It runs a subagent: a nested chat with this user message (see
    /// `AgentLoop`, which runs it).
    Subagent(String),
    /// It makes a title request (no tools) with this user message through the adapter.
    TitleRequest(String),
}

/// A tool as DSH holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTool {
    /// What the model is offered.
    pub definition: ToolSchema,
    /// DSH's permission policy for it.
    pub permission: Permission,
    /// What executing it yields.
    pub behaviour: ToolBehaviour,
    /// How long an allowed execution takes.
    pub duration: std::time::Duration,
    /// The fake's `tools/call` answers the chat's first execution waits for, if any.
    pub hold_until_fake_answers: Option<usize>,
}

impl HostTool {
    /// The tool a scenario's `dsh.tools` entry describes.
    pub fn from_spec(spec: &ToolSpec) -> Self {
        let behaviour = match (&spec.error, &spec.subagent, &spec.result) {
            _ if spec.title_request.is_some() && spec.error.is_none() => {
                ToolBehaviour::TitleRequest(spec.title_request.clone().unwrap_or_default())
            }
            (Some(error), _, _) => ToolBehaviour::Fails(error.clone()),
            (None, Some(task), _) => ToolBehaviour::Subagent(task.clone()),
            (None, None, Some(result)) => ToolBehaviour::Output(result.clone()),
            (None, None, None) => ToolBehaviour::Output(Value::String("ok".to_owned())),
        };
        Self {
            definition: ToolSchema {
                name: spec.name.clone(),
                description: spec.description.clone(),
                parameters: spec.schema.clone(),
            },
            permission: spec.permission,
            behaviour,
            duration: std::time::Duration::from_millis(spec.delay_ms),
            hold_until_fake_answers: spec.hold_until_fake_answers,
        }
    }
}

/// The result of handling one call, and whether it was executed.
#[derive(Debug, Clone, PartialEq)]
pub struct Handled {
    /// The durable result DSH records: its tool-result message.
    pub result: Message,
    /// Whether DSH executed the tool (false when it denied the call).
    pub executed: bool,
}

/// Applies DSH's permission policy to `call` and, if allowed, "executes" it.
pub fn handle_call(tool: &HostTool, call: &ToolCallBlock) -> Handled {
    let (output, is_error, executed) = match (tool.permission, &tool.behaviour) {
        (Permission::Deny, _) => (Value::String(PERMISSION_DENIED.to_owned()), true, false),
        // DSH's tool runtime on a rejected approval (`serviceAsk`, `@deepseek-ai/dsh-tools`).
        (Permission::AskRejected, _) => (
            Value::String(format!(
                "the user rejected tool \"{}\"",
                tool.definition.name
            )),
            true,
            false,
        ),
        (_, ToolBehaviour::Output(output)) => (output.clone(), false, true),
        (_, ToolBehaviour::Fails(error)) => (Value::String(error.clone()), true, true),
        // The agent loop runs subagents itself; here there is no adapter to run one on.
        (_, ToolBehaviour::Subagent(_) | ToolBehaviour::TitleRequest(_)) => (
            Value::String("subagents and title requests run inside the agent loop".to_owned()),
            true,
            false,
        ),
    };
    Handled {
        result: result_message(&call.id, &output, is_error),
        executed,
    }
}

/// DSH's tool-result message for `call_id` (`createToolResultMessage`: a user message
/// with one `tool-result` block, sourced from the tool): a string output as its text, any
/// other JSON as its JSON text. An error result's text is `Error: ` and the reason, as
/// DSH's tool runtime writes every denial, thrown tool and skipped call
/// (`@deepseek-ai/dsh-tools`: `` `Error: ${denialReason}` ``, `` `Error: ${message}` ``).
pub fn result_message(call_id: &str, output: &Value, is_error: bool) -> Message {
    let text = match output {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let text = if is_error {
        format!("Error: {text}")
    } else {
        text
    };
    Message::tool_result(call_id, vec![ContentBlock::text(text)], is_error)
}
