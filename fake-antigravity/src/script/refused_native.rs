//! `after_refusal:` of a `native` step: what an agent does with its own tool once the
//! client refused (or cancelled) the permission it asked from inside that tool.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a refused `native` tool call ends (`after_refusal:`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefusedNative {
    /// `tool_call_update` failed at once, as 1.3.0 does (the default).
    #[default]
    Failed,
    /// An agent that asks from inside an already-running tool: `tool_call_update`
    /// in_progress (`Running <tool>`), then failed. Nothing runs.
    InProgressThenFailed,
    /// The same, but the tool runs anyway: in_progress, then it really acts (its `path`,
    /// its `signal`) and ends `completed` (or `failed` with the OS error).
    InProgressThenCompleted,
}
