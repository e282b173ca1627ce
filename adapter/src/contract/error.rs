//! `LlmError` and `LlmErrorCode`: the only failure shape DSH sees from the adapter, with
//! DSH's SCREAMING_SNAKE code strings. Where the TypeScript plugin dsh-antigravity-acp
//! already names a failure, the code is its string, so a user's routing and retry settings
//! carry over; failures it does not have get `ACP_` codes of their own. The README's
//! error table lists them all; `crate::error` is the one place internal failures map to
//! them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A stable failure code. DSH routes and retries on it; its spelling never changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum LlmErrorCode {
    /// DSH's abort signal (or an early return) ended the generation; the server cancelled.
    Aborted,
    /// The server ended its turn normally without any content.
    EmptyResponse,
    /// The request sets a control the server cannot honour (`temperature`, `maxTokens`,
    /// `reasoningEffort`, a non-empty `stop`), or carries a block that cannot be projected.
    UnsupportedOption,
    /// The server needs a sign-in that could not be completed.
    #[serde(rename = "ACP_AUTH_REQUIRED")]
    AcpAuthRequired,
    /// The server command does not exist.
    #[serde(rename = "ACP_BINARY_MISSING")]
    AcpBinaryMissing,
    /// The server command exists but could not be started.
    #[serde(rename = "ACP_SPAWN_FAILED")]
    AcpSpawnFailed,
    /// The server cannot be confined as `confinement: required` demands (on Linux no
    /// Landlock, or too old an ABI; on Windows no confinement yet), or its confinement
    /// could not be built.
    #[serde(rename = "ACP_CONFINEMENT_UNAVAILABLE")]
    AcpConfinementUnavailable,
    /// The connection to the server closed (the process exited or broke the framing).
    #[serde(rename = "ACP_DISCONNECTED")]
    AcpDisconnected,
    /// The server answered an ACP request with an error (only its code is kept).
    #[serde(rename = "ACP_RPC_ERROR")]
    AcpRpcError,
    /// The server speaks another ACP protocol version than 1.
    #[serde(rename = "ACP_VERSION_MISMATCH")]
    AcpVersionMismatch,
    /// The requested model is not among the session's model options.
    #[serde(rename = "ACP_INVALID_MODEL")]
    AcpInvalidModel,
    /// A continuation leaves an issued tool call without its result.
    #[serde(rename = "ACP_TOOL_RESULTS_MISSING")]
    AcpToolResultsMissing,
    /// A continuation repeats a tool result, or answers a call that was never issued.
    #[serde(rename = "ACP_INVALID_HISTORY")]
    AcpInvalidHistory,
    /// A tool cannot be exported (invalid schema, remote `$ref`, too large, too many tools,
    /// a duplicate name).
    #[serde(rename = "ACP_TOOL_CATALOG_INVALID")]
    AcpToolCatalogInvalid,
    /// A model segment exceeded `timeoutMs`.
    #[serde(rename = "ACP_TIMEOUT")]
    AcpTimeout,
    /// DSH's tool results took longer than `toolTimeoutMs`.
    #[serde(rename = "ACP_TOOL_TIMEOUT")]
    AcpToolTimeout,
    /// More than `maxActiveTurns` tool turns at once.
    #[serde(rename = "ACP_SESSION_BUSY")]
    AcpSessionBusy,
    /// The server started a tool of its own; the turn was cancelled.
    #[serde(rename = "ACP_NATIVE_TOOL_REJECTED")]
    AcpNativeToolRejected,
    /// The server refused to answer (`refusal` stop reason).
    #[serde(rename = "ACP_REFUSAL")]
    AcpRefusal,
    /// The server hit its own request limit for the turn (`max_turn_requests`).
    #[serde(rename = "ACP_TURN_LIMIT")]
    AcpTurnLimit,
    /// The server ended the prompt with a stop reason ACP v1 does not define.
    #[serde(rename = "ACP_UNKNOWN_STOP")]
    AcpUnknownStop,
    /// The adapter was disposed while the request was running.
    #[serde(rename = "ACP_DISPOSED")]
    AcpDisposed,
    /// The pinned server could not be installed, verified or repaired; the message names
    /// the installer's reason (`digest_mismatch`, `not_found`, `unsafe_archive`, ...).
    #[serde(rename = "ACP_INSTALL_FAILED")]
    AcpInstallFailed,
    /// Google ships no build of the server for this platform (the message names it).
    /// The plugin's loader raises it too, where no addon fits.
    #[serde(rename = "ACP_PLATFORM_UNSUPPORTED")]
    AcpPlatformUnsupported,
    /// An image block's bytes could not be had from DSH's attachment store.
    #[serde(rename = "ACP_ATTACHMENT_UNAVAILABLE")]
    AcpAttachmentUnavailable,
    /// The adapter could not set up its own side (scratch directory, bridge), or the
    /// binding caught a panic.
    #[serde(rename = "ACP_INTERNAL")]
    AcpInternal,
    /// The plugin's config was refused (the message names the field).
    #[serde(rename = "ACP_INVALID_CONFIG")]
    AcpInvalidConfig,
    /// A request handed to the Node binding does not have DSH's shape.
    #[serde(rename = "ACP_INVALID_REQUEST")]
    AcpInvalidRequest,
}

impl LlmErrorCode {
    /// Every code, in the order of the README's table.
    pub const ALL: [LlmErrorCode; 28] = [
        Self::Aborted,
        Self::EmptyResponse,
        Self::UnsupportedOption,
        Self::AcpAuthRequired,
        Self::AcpBinaryMissing,
        Self::AcpSpawnFailed,
        Self::AcpConfinementUnavailable,
        Self::AcpDisconnected,
        Self::AcpRpcError,
        Self::AcpVersionMismatch,
        Self::AcpInvalidModel,
        Self::AcpToolResultsMissing,
        Self::AcpInvalidHistory,
        Self::AcpToolCatalogInvalid,
        Self::AcpTimeout,
        Self::AcpToolTimeout,
        Self::AcpSessionBusy,
        Self::AcpNativeToolRejected,
        Self::AcpRefusal,
        Self::AcpTurnLimit,
        Self::AcpUnknownStop,
        Self::AcpDisposed,
        Self::AcpInstallFailed,
        Self::AcpPlatformUnsupported,
        Self::AcpAttachmentUnavailable,
        Self::AcpInternal,
        Self::AcpInvalidConfig,
        Self::AcpInvalidRequest,
    ];

    /// The code's DSH string, e.g. `ACP_AUTH_REQUIRED`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Aborted => "ABORTED",
            Self::EmptyResponse => "EMPTY_RESPONSE",
            Self::UnsupportedOption => "UNSUPPORTED_OPTION",
            Self::AcpAuthRequired => "ACP_AUTH_REQUIRED",
            Self::AcpBinaryMissing => "ACP_BINARY_MISSING",
            Self::AcpSpawnFailed => "ACP_SPAWN_FAILED",
            Self::AcpConfinementUnavailable => "ACP_CONFINEMENT_UNAVAILABLE",
            Self::AcpDisconnected => "ACP_DISCONNECTED",
            Self::AcpRpcError => "ACP_RPC_ERROR",
            Self::AcpVersionMismatch => "ACP_VERSION_MISMATCH",
            Self::AcpInvalidModel => "ACP_INVALID_MODEL",
            Self::AcpToolResultsMissing => "ACP_TOOL_RESULTS_MISSING",
            Self::AcpInvalidHistory => "ACP_INVALID_HISTORY",
            Self::AcpToolCatalogInvalid => "ACP_TOOL_CATALOG_INVALID",
            Self::AcpTimeout => "ACP_TIMEOUT",
            Self::AcpToolTimeout => "ACP_TOOL_TIMEOUT",
            Self::AcpSessionBusy => "ACP_SESSION_BUSY",
            Self::AcpNativeToolRejected => "ACP_NATIVE_TOOL_REJECTED",
            Self::AcpRefusal => "ACP_REFUSAL",
            Self::AcpTurnLimit => "ACP_TURN_LIMIT",
            Self::AcpUnknownStop => "ACP_UNKNOWN_STOP",
            Self::AcpDisposed => "ACP_DISPOSED",
            Self::AcpInstallFailed => "ACP_INSTALL_FAILED",
            Self::AcpPlatformUnsupported => "ACP_PLATFORM_UNSUPPORTED",
            Self::AcpAttachmentUnavailable => "ACP_ATTACHMENT_UNAVAILABLE",
            Self::AcpInternal => "ACP_INTERNAL",
            Self::AcpInvalidConfig => "ACP_INVALID_CONFIG",
            Self::AcpInvalidRequest => "ACP_INVALID_REQUEST",
        }
    }

    /// The code a DSH string names, if it is one of the adapter's.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|code| code.as_str() == text)
    }
}

impl fmt::Display for LlmErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure as DSH sees it: a stable code and a sanitized message written by the adapter.
///
/// The message never quotes a remote error, the server's stderr, a token or a prompt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct LlmError {
    /// A sanitized explanation for people.
    pub message: String,
    /// What kind of failure this is.
    pub code: LlmErrorCode,
}

impl LlmError {
    /// Builds an error from a code and a message the adapter wrote itself.
    pub fn new(code: LlmErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// DSH's serializable failure facts for a terminal `finish` chunk. The server reports
    /// no HTTP status, retry delay or request id, so those stay absent.
    pub fn to_failure(&self) -> LlmFailure {
        LlmFailure {
            message: self.message.clone(),
            code: self.code.as_str().to_owned(),
            status: None,
            provider_retry_after_ms: None,
            request_id: None,
        }
    }
}

/// Serializable failure facts (DSH's `LlmFailure`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmFailure {
    /// Human-readable, sanitized failure.
    pub message: String,
    /// Stable machine-routing code (an [`super::LlmErrorCode`] string).
    pub code: String,
    /// HTTP status from the provider, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Provider-requested retry delay in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_retry_after_ms: Option<u64>,
    /// Opaque provider request id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The strings DSH routes on, written out: each is pinned through `as_str`,
    /// `Display`, serde, `parse` and `LlmError`'s own `Display`. The first block are the
    /// TypeScript plugin's own strings (routing and retry settings carry over).
    #[test]
    fn every_code_has_its_dsh_string() -> crate::TestResult {
        use LlmErrorCode::*;
        let pinned = [
            (Aborted, "ABORTED"),
            (EmptyResponse, "EMPTY_RESPONSE"),
            (UnsupportedOption, "UNSUPPORTED_OPTION"),
            (AcpAuthRequired, "ACP_AUTH_REQUIRED"),
            (AcpBinaryMissing, "ACP_BINARY_MISSING"),
            (AcpDisconnected, "ACP_DISCONNECTED"),
            (AcpRpcError, "ACP_RPC_ERROR"),
            (AcpVersionMismatch, "ACP_VERSION_MISMATCH"),
            (AcpInvalidModel, "ACP_INVALID_MODEL"),
            (AcpToolResultsMissing, "ACP_TOOL_RESULTS_MISSING"),
            (AcpToolCatalogInvalid, "ACP_TOOL_CATALOG_INVALID"),
            (AcpTimeout, "ACP_TIMEOUT"),
            (AcpToolTimeout, "ACP_TOOL_TIMEOUT"),
            (AcpSessionBusy, "ACP_SESSION_BUSY"),
            (AcpRefusal, "ACP_REFUSAL"),
            (AcpTurnLimit, "ACP_TURN_LIMIT"),
            (AcpUnknownStop, "ACP_UNKNOWN_STOP"),
            (AcpDisposed, "ACP_DISPOSED"),
            (AcpInstallFailed, "ACP_INSTALL_FAILED"),
            (AcpPlatformUnsupported, "ACP_PLATFORM_UNSUPPORTED"),
            // The adapter's own.
            (AcpSpawnFailed, "ACP_SPAWN_FAILED"),
            (AcpConfinementUnavailable, "ACP_CONFINEMENT_UNAVAILABLE"),
            (AcpInvalidHistory, "ACP_INVALID_HISTORY"),
            (AcpNativeToolRejected, "ACP_NATIVE_TOOL_REJECTED"),
            (AcpAttachmentUnavailable, "ACP_ATTACHMENT_UNAVAILABLE"),
            (AcpInternal, "ACP_INTERNAL"),
            (AcpInvalidConfig, "ACP_INVALID_CONFIG"),
            (AcpInvalidRequest, "ACP_INVALID_REQUEST"),
        ];
        assert_eq!(pinned.len(), LlmErrorCode::ALL.len());
        for (code, spelling) in pinned {
            assert_eq!(code.as_str(), spelling);
            assert_eq!(code.to_string(), spelling);
            assert_eq!(serde_json::to_value(code)?, spelling);
            assert_eq!(LlmErrorCode::parse(spelling), Some(code));
            let error = LlmError::new(code, "what happened");
            assert_eq!(error.to_string(), format!("{spelling}: what happened"));
            assert_eq!(error.to_failure().code, spelling);
        }
        Ok(())
    }
}
