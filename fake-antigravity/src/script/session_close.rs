//! `session_close:`, the script's switches for ACP's `session/close` (which 1.3.0 does
//! not advertise).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `session/close`.
///
/// The fake always answers `session/close` (by forgetting the session), advertised or
/// not; like every request it is journaled as an `acp_in` frame.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionCloseScript {
    /// Advertise `agentCapabilities.sessionCapabilities.close` in `initialize` (default
    /// false, as 1.3.0, which advertises only `list` and `resume`).
    #[serde(default)]
    pub advertise: bool,
    /// Before answering a `session/close`, ask `session/request_permission` for this host
    /// tool (found on the session's MCP servers as a `call` step finds it; a pending
    /// `tool_call` with `_meta.mcp`, as a host call's), as a late request of the turn that
    /// just finished,
    /// and wait (up to 5 s) for the answer, which is journaled and otherwise ignored.
    /// The closing client has finished that turn: a client whose handlers are detached
    /// cancels it (C33). Default: none.
    #[serde(default)]
    pub late_permission: Option<String>,
}
