//! DSH's tools in miniature: each has a definition offered to the model, DSH's own
//! permission policy, and a scripted outcome. Running one is how DSH stays in control of
//! execution (C17): an allowed call produces its scripted output, a denied one an error
//! result, and only allowed calls count as executions.

use antigravity_acp::contract::{ToolCallPart, ToolDefinition, ToolResult};
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
    pub definition: ToolDefinition,
    /// DSH's permission policy for it.
    pub permission: Permission,
    /// What executing it yields.
    pub behaviour: ToolBehaviour,
    /// How long an allowed execution takes.
    pub duration: std::time::Duration,
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
            definition: ToolDefinition {
                name: spec.name.clone(),
                description: spec.description.clone(),
                input_schema: spec.schema.clone(),
            },
            permission: spec.permission,
            behaviour,
            duration: std::time::Duration::from_millis(spec.delay_ms),
        }
    }
}

/// The result of handling one call, and whether it was executed.
#[derive(Debug, Clone, PartialEq)]
pub struct Handled {
    /// The durable result DSH records.
    pub result: ToolResult,
    /// Whether DSH executed the tool (false when it denied the call).
    pub executed: bool,
}

/// Applies DSH's permission policy to `call` and, if allowed, "executes" it.
pub fn handle_call(tool: &HostTool, call: &ToolCallPart) -> Handled {
    let (output, is_error, executed) = match (tool.permission, &tool.behaviour) {
        (Permission::Deny, _) => (Value::String(PERMISSION_DENIED.to_owned()), true, false),
        (Permission::Allow, ToolBehaviour::Output(output)) => (output.clone(), false, true),
        (Permission::Allow, ToolBehaviour::Fails(error)) => {
            (Value::String(error.clone()), true, true)
        }
        // The agent loop runs subagents itself; here there is no adapter to run one on.
        (Permission::Allow, ToolBehaviour::Subagent(_) | ToolBehaviour::TitleRequest(_)) => (
            Value::String("subagents and title requests run inside the agent loop".to_owned()),
            true,
            false,
        ),
    };
    Handled {
        result: ToolResult {
            call_id: call.call_id.clone(),
            tool_name: call.tool_name.clone(),
            output,
            is_error,
        },
        executed,
    }
}
