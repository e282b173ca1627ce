//! `LlmError`: the only error shape DSH sees from an adapter, with stable sanitized codes.

use std::fmt;

/// A stable error code. DSH may branch on it; its spelling never changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmErrorCode {
    /// The server needs a sign-in that could not be completed.
    AuthRequired,
    /// The server command could not be started, or died.
    ServerUnavailable,
    /// The server broke the ACP protocol or answered with an error.
    ServerError,
    /// The request asked for a model the server does not offer.
    ModelUnavailable,
    /// The request's history is inconsistent (missing or duplicate tool results, ...).
    InvalidHistory,
    /// A tool definition cannot be exported (bad schema, too large, duplicate name, ...).
    InvalidToolDefinition,
    /// The request carries input the server cannot receive (e.g. a binary part).
    UnsupportedInput,
    /// The request sets a sampling control the server cannot honour.
    UnsupportedOption,
    /// A model segment or a parked tool call ran out of time.
    Timeout,
    /// Too many tool turns are active at once.
    Busy,
    /// The server attempted an action of its own instead of using DSH's tools.
    NativeToolRejected,
    /// The adapter was disposed while the request was running.
    Disposed,
    /// A fault inside the adapter.
    Internal,
    /// The pinned server could not be installed, verified or repaired; the message names
    /// the installer's reason (`digest_mismatch`, `not_found`, `unsafe_archive`, ...).
    InstallFailed,
}

impl LlmErrorCode {
    /// The code's stable spelling, e.g. `auth_required`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AuthRequired => "auth_required",
            Self::ServerUnavailable => "server_unavailable",
            Self::ServerError => "server_error",
            Self::ModelUnavailable => "model_unavailable",
            Self::InvalidHistory => "invalid_history",
            Self::InvalidToolDefinition => "invalid_tool_definition",
            Self::UnsupportedInput => "unsupported_input",
            Self::UnsupportedOption => "unsupported_option",
            Self::Timeout => "timeout",
            Self::Busy => "busy",
            Self::NativeToolRejected => "native_tool_rejected",
            Self::Disposed => "disposed",
            Self::Internal => "internal",
            Self::InstallFailed => "install_failed",
        }
    }
}

impl fmt::Display for LlmErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error as DSH sees it: a stable code and a sanitized message written by the adapter.
///
/// The message never quotes a remote error, the server's stderr, a token or a prompt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct LlmError {
    /// What kind of failure this is.
    pub code: LlmErrorCode,
    /// A sanitized explanation for people.
    pub message: String,
}

impl LlmError {
    /// Builds an error from a code and a message the adapter wrote itself.
    pub fn new(code: LlmErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spellings DSH branches on, written out: each is pinned as a string, through
    /// `as_str`, `Display`, serde and `LlmError`'s own `Display`.
    #[test]
    fn every_code_has_its_released_spelling() -> crate::TestResult {
        use LlmErrorCode::*;
        let pinned = [
            (AuthRequired, "auth_required"),
            (ServerUnavailable, "server_unavailable"),
            (ServerError, "server_error"),
            (ModelUnavailable, "model_unavailable"),
            (InvalidHistory, "invalid_history"),
            (InvalidToolDefinition, "invalid_tool_definition"),
            (UnsupportedInput, "unsupported_input"),
            (UnsupportedOption, "unsupported_option"),
            (Timeout, "timeout"),
            (Busy, "busy"),
            (NativeToolRejected, "native_tool_rejected"),
            (Disposed, "disposed"),
            (Internal, "internal"),
            (InstallFailed, "install_failed"),
        ];
        for (code, spelling) in pinned {
            assert_eq!(code.as_str(), spelling);
            assert_eq!(code.to_string(), spelling);
            assert_eq!(serde_json::to_value(code)?, spelling);
            let error = LlmError::new(code, "what happened");
            assert_eq!(error.to_string(), format!("{spelling}: what happened"));
        }
        Ok(())
    }
}
