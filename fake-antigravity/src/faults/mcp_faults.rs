//! The script's MCP client faults (`mcp_client.fault`): one misbehaviour of the fake's
//! MCP client, struck at one `tools/call`, so a scenario (or `dsh-sim chaos`) can prove the
//! adapter's bridge copes. What each does on the wire is in `faults/mcp_fault_calls.rs`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One MCP client fault: what goes wrong, at which `tools/call`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpFault {
    /// What the client does wrong.
    pub kind: McpFaultKind,
    /// Which `tools/call` it strikes: the index of the call among every `tools/call` this
    /// fake process makes, 0-based (a `parallel` step's calls count in the order they
    /// start). The other calls are made normally.
    pub call: usize,
}

/// What an MCP client fault does to its `tools/call`. Every request the fault sends, and
/// every response it gets (or the failure in its place), is journaled with its JSON-RPC
/// id (`rpc_id`), so a judge can tell how often each request was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpFaultKind {
    /// The request is written whole on a fresh connection, which the client then closes
    /// at once, before any answer: the bridge may or may not have parked the call by
    /// then. The call fails on the fake's side (`disconnected by the client`).
    DisconnectMidCall,
    /// The same JSON-RPC `tools/call` (same id, same params) is POSTed twice at once, on
    /// two connections. The step's outcome is the answer that carries a result (else the
    /// first failure).
    CallTwice,
    /// The call is made normally; then, once the prompt's result has been sent, the very
    /// same request (same id, same params) is POSTed again: a call after the turn ended.
    CallAfterTurn,
    /// The call carries the `Authorization` header of an earlier session's MCP server of
    /// the same name in this process (its bridge, of an ended turn), on the current URL;
    /// with no earlier session, a well-formed bearer token nobody issued. The bridge must
    /// refuse it (the fake journals `HTTP <status>`).
    StaleToken,
    /// 65 `tools/call` of the tool (same params, 65 fresh ids) are POSTed at once, one
    /// more than the 64 pending calls a bridge accepts. The step's outcome is the first
    /// call's.
    Burst,
    /// The request is written whole on a fresh connection; when the first byte of the
    /// answer arrives, the client resets the connection (TCP RST) instead of reading the
    /// rest. The call fails on the fake's side (`reset by the client`).
    ResetWhileResult,
}

impl McpFaultKind {
    /// Every kind, in the order the documentation lists them.
    pub const ALL: [Self; 6] = [
        Self::DisconnectMidCall,
        Self::CallTwice,
        Self::CallAfterTurn,
        Self::StaleToken,
        Self::Burst,
        Self::ResetWhileResult,
    ];

    /// Its spelling in a script (`disconnect_mid_call`, `call_twice`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::DisconnectMidCall => "disconnect_mid_call",
            Self::CallTwice => "call_twice",
            Self::CallAfterTurn => "call_after_turn",
            Self::StaleToken => "stale_token",
            Self::Burst => "burst",
            Self::ResetWhileResult => "reset_while_result",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_by_its_name() -> Result<(), serde_json::Error> {
        for kind in McpFaultKind::ALL {
            let text = serde_json::to_string(&kind)?;
            assert_eq!(text, format!("\"{}\"", kind.name()));
            assert_eq!(serde_json::from_str::<McpFaultKind>(&text)?, kind);
        }
        Ok(())
    }
}
