//! `expect.finish`: the kind of a `finish` chunk's reason as scenarios spell it, with
//! DSH's names. The host's transcript records it; the format owns it, so the scenario
//! format depends on nothing of the host.

use antigravity_acp::contract::FinishReason;
use serde::{Deserialize, Serialize};

/// The kind of a `finish` chunk's reason (DSH's `FinishReason.kind`), as scenarios spell
/// it in `expect.finish`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FinishKind {
    /// `stop`.
    Stop,
    /// `tool-calls`.
    ToolCalls,
    /// `max-tokens`.
    MaxTokens,
    /// `aborted` (with a failure, code `ABORTED`).
    Aborted,
    /// `error` (with a failure).
    Error,
}

impl FinishKind {
    /// The kind of `reason`.
    pub fn of(reason: &FinishReason) -> Self {
        match reason {
            FinishReason::Stop => Self::Stop,
            FinishReason::ToolCalls => Self::ToolCalls,
            FinishReason::MaxTokens => Self::MaxTokens,
            FinishReason::Aborted { .. } => Self::Aborted,
            FinishReason::Error { .. } => Self::Error,
        }
    }

    /// DSH's spelling (`stop`, `tool-calls`, `max-tokens`, `aborted`, `error`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::ToolCalls => "tool-calls",
            Self::MaxTokens => "max-tokens",
            Self::Aborted => "aborted",
            Self::Error => "error",
        }
    }
}
