//! `AdapterError`, the adapter's internal failures, and their one mapping to the sanitized
//! [`LlmError`] codes DSH sees.
//!
//! Remote error texts and server stderr never enter an `AdapterError`'s message: a remote
//! failure keeps only its JSON-RPC code, and `to_llm_error` writes every message itself.

use crate::contract::{LlmError, LlmErrorCode};

/// What can go wrong inside the adapter.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AdapterError {
    /// The server command could not be spawned.
    #[error("could not start the server command")]
    Spawn(#[source] std::io::Error),
    /// `confinement: required`, but the kernel cannot confine the server as B06 promises.
    #[error("{}", confinement_unavailable(*offered, *needed))]
    ConfinementUnavailable {
        /// The Landlock ABI the kernel offers (0: none).
        offered: u8,
        /// The ABI the promise needs.
        needed: u8,
    },
    /// `confinement: required` on a system the adapter cannot confine on yet (Windows).
    #[error(
        "confinement is required, but the adapter cannot confine the server on {system} yet; \
         no server was started (set confinement to best_effort to run it unconfined, or off)"
    )]
    ConfinementUnsupported {
        /// The system (`std::env::consts::OS`).
        system: &'static str,
    },
    /// The system offers confinement, but the server's rules could not be built (a path
    /// could not be opened or written into a profile, the ruleset was refused); nothing
    /// was started.
    #[cfg_attr(
        not(any(target_os = "linux", target_os = "macos")),
        allow(
            dead_code,
            reason = "built only where a system confines (Linux, macOS)"
        )
    )]
    #[error("could not confine the server: {0}")]
    ConfinementFailed(&'static str),
    /// The private scratch directory could not be made.
    #[error("could not create a private scratch directory")]
    Scratch(#[source] std::io::Error),
    /// The MCP bridge could not bind or serve.
    #[error("could not start the MCP bridge")]
    Bridge(#[source] std::io::Error),
    /// The server answered an ACP request with an error (its text is dropped).
    #[error("the server refused `{method}` with code {code}")]
    Remote {
        /// The ACP method.
        method: &'static str,
        /// The JSON-RPC error code.
        code: i32,
    },
    /// The server answered `initialize` with an ACP protocol version other than 1.
    #[error(
        "the server speaks ACP protocol version {0}; this adapter speaks only version 1 (install the pinned server)"
    )]
    ProtocolVersion(u16),
    /// The connection to the server ended (the process exited or broke the framing);
    /// before the server was ready, what is known to stop it on this machine is named.
    #[error("the server connection closed during {0}{hint}", hint = crate::server::machine_fit::closed_during(.0))]
    ConnectionClosed(&'static str),
    /// The connection ended during `method` while the kernel confined the server: nearly
    /// always a runtime it needs outside its own folder (a Python or Node under the user's
    /// home). Still `ACP_DISCONNECTED`; the text says it ran confined, how, and which
    /// settings help. The server's stderr is never quoted.
    #[error(
        "the server connection closed during {method}{hint}; the server ran confined ({how}), \
         so a program or runtime it needs outside its own folder (a Python or Node under your \
         home, say) may be out of its reach: add that folder to allowRead (allowWrite if it \
         must write there), or set confinement to off to check, then retry",
        hint = crate::server::machine_fit::closed_during(.method),
        how = confined_how(*.confinement)
    )]
    ClosedWhileConfined {
        /// The ACP method under way.
        method: &'static str,
        /// How the kernel confined it.
        confinement: crate::server::Enforcement,
    },
    /// The server requires a sign-in that could not be done (the text says how to).
    #[error("{0}")]
    AuthRequired(crate::acp::SignInProblem),
    /// The server does not offer the requested model.
    #[error(
        "model `{0}` is not offered by the server; pick one DSH's model list shows (the \
         server's own catalogue once it was read), or antigravity-acp/server-default for the \
         server's default"
    )]
    ModelUnavailable(String),
    /// A tool definition cannot be exported through the bridge.
    #[error("tool `{name}` cannot be offered: {reason}")]
    InvalidTool {
        /// DSH's tool name.
        name: String,
        /// Why (written by the adapter).
        reason: String,
    },
    /// A continuation repeats a tool result or answers a call never issued.
    #[error("inconsistent history: {0}")]
    InvalidHistory(String),
    /// A continuation leaves an issued call without its result.
    #[error("inconsistent history: {0}")]
    ToolResultsMissing(String),
    /// The request carries a block the server cannot receive.
    #[error("unsupported input: {0}")]
    UnsupportedInput(String),
    /// An image block's bytes were not resolved by the host.
    #[error("the bytes of image attachment `{0}` were not provided by DSH's attachment store")]
    AttachmentUnavailable(String),
    /// The request sets controls the server cannot honour.
    #[error("the Antigravity server accepts no {0}")]
    UnsupportedOption(String),
    /// A model segment (or the start of the session) ran out of time.
    #[error("{0} timed out")]
    Timeout(&'static str),
    /// DSH's tool results took longer than the tool timeout.
    #[error("waiting for DSH's tool results timed out")]
    ToolTimeout,
    /// The server ended its turn without any content.
    #[error("the server ended its turn without any content")]
    EmptyResponse,
    /// The server refused to answer.
    #[error("the server refused to answer (stop reason `refusal`)")]
    Refusal,
    /// The server hit its own request limit for the turn.
    #[error("the server reached its request limit for the turn (stop reason `max_turn_requests`)")]
    TurnLimit,
    /// The server ended the prompt with a stop reason ACP v1 does not define.
    #[error("the server ended the prompt with an unknown stop reason")]
    UnknownStop,
    /// Too many tool turns are active.
    #[error("too many active tool turns (limit {0})")]
    Busy(usize),
    /// The server ran an action of its own; how it was confined says how far that
    /// action could reach (`None`: not a subprocess, the driver tests' in-process fake).
    #[error("the server attempted a native action ({action}); the turn was cancelled{}",
        confinement.map(|c| format!("; {c}")).unwrap_or_default())]
    NativeToolRejected {
        /// What the adapter saw.
        action: String,
        /// How the server process was confined.
        confinement: Option<crate::server::Enforcement>,
    },
    /// The provider was disposed.
    #[error("the adapter was disposed")]
    Disposed,
    /// The pinned server could not be installed, verified or repaired.
    #[error("could not install the Antigravity server ({reason}): {message}{}", install_next_step(.reason))]
    Install {
        /// The installer's stable reason (`digest_mismatch`, `not_found`, ...).
        reason: &'static str,
        /// The installer's own message (it quotes no remote text).
        message: String,
    },
}

/// How a server was confined, in words (only confined cases reach here).
fn confined_how(confinement: crate::server::Enforcement) -> String {
    match confinement {
        crate::server::Enforcement::Confined { abi } => {
            format!("by the kernel, Landlock ABI {abi}")
        }
        crate::server::Enforcement::Seatbelt => "by macOS's Seatbelt".to_owned(),
        other => other.to_string(),
    }
}

/// What a user does next after an install failure, by the installer's reason.
fn install_next_step(reason: &str) -> &'static str {
    match reason {
        "network" | "stalled" | "truncated" | "registry_unavailable" | "http_status" => {
            "; the first turn downloads the pinned server once: check the network (or the \
             proxy: HTTPS_PROXY is passed through), then retry; `antigravity-acp-dsh doctor` \
             checks the install"
        }
        "not_found" | "agent_missing" | "platform_missing" | "version_mismatch" => {
            "; the registry does not offer the pinned build: point `registry` at a mirror that \
             does, or set `server` to a command you installed, then retry"
        }
        "digest_mismatch" | "still_corrupt" | "unsafe_archive" => {
            "; what was downloaded is not the pinned build: retry on another network, or check \
             `registry` and `sha256` in the plugin config"
        }
        "no_cache_dir" | "bad_cache_dir" | "io" => {
            "; set `cacheDir` to a folder this user can write, then retry"
        }
        "insufficient_space" => {
            "; free space on that disk, or set `cacheDir` to a folder on a disk with room, then \
             retry"
        }
        _ => "",
    }
}

impl AdapterError {
    /// Keeps only the code of a remote ACP error.
    pub(crate) fn remote(method: &'static str, error: &agent_client_protocol::Error) -> Self {
        // The SDK marks the two ways the connection itself can end before an answer; any
        // other error came from the server.
        if agent_client_protocol::is_connection_terminated(error)
            || agent_client_protocol::is_incoming_transport_closed(error)
        {
            return Self::ConnectionClosed(method);
        }
        Self::Remote {
            method,
            code: error.code.value(),
        }
    }

    /// The one place where internal failures become DSH's sanitized error codes.
    pub(crate) fn to_llm_error(&self) -> LlmError {
        let code = match self {
            Self::Spawn(io) if io.kind() == std::io::ErrorKind::NotFound => {
                LlmErrorCode::AcpBinaryMissing
            }
            Self::Spawn(_) => LlmErrorCode::AcpSpawnFailed,
            Self::ConfinementUnavailable { .. }
            | Self::ConfinementUnsupported { .. }
            | Self::ConfinementFailed(_) => LlmErrorCode::AcpConfinementUnavailable,
            Self::ConnectionClosed(_) | Self::ClosedWhileConfined { .. } => {
                LlmErrorCode::AcpDisconnected
            }
            Self::Scratch(_) | Self::Bridge(_) => LlmErrorCode::AcpInternal,
            Self::Remote { .. } => LlmErrorCode::AcpRpcError,
            Self::ProtocolVersion(_) => LlmErrorCode::AcpVersionMismatch,
            Self::AuthRequired(_) => LlmErrorCode::AcpAuthRequired,
            Self::ModelUnavailable(_) => LlmErrorCode::AcpInvalidModel,
            Self::InvalidTool { .. } => LlmErrorCode::AcpToolCatalogInvalid,
            Self::InvalidHistory(_) => LlmErrorCode::AcpInvalidHistory,
            Self::ToolResultsMissing(_) => LlmErrorCode::AcpToolResultsMissing,
            Self::UnsupportedInput(_) | Self::UnsupportedOption(_) => {
                LlmErrorCode::UnsupportedOption
            }
            Self::AttachmentUnavailable(_) => LlmErrorCode::AcpAttachmentUnavailable,
            Self::Timeout(_) => LlmErrorCode::AcpTimeout,
            Self::ToolTimeout => LlmErrorCode::AcpToolTimeout,
            Self::EmptyResponse => LlmErrorCode::EmptyResponse,
            Self::Refusal => LlmErrorCode::AcpRefusal,
            Self::TurnLimit => LlmErrorCode::AcpTurnLimit,
            Self::UnknownStop => LlmErrorCode::AcpUnknownStop,
            Self::Busy(_) => LlmErrorCode::AcpSessionBusy,
            Self::NativeToolRejected { .. } => LlmErrorCode::AcpNativeToolRejected,
            Self::Disposed => LlmErrorCode::AcpDisposed,
            // Google ships nothing for this platform: not a failure a retry or a mirror mends.
            Self::Install {
                reason: "unsupported_platform",
                ..
            } => LlmErrorCode::AcpPlatformUnsupported,
            Self::Install { .. } => LlmErrorCode::AcpInstallFailed,
        };
        // Every Display text above is written by the adapter; io errors' own texts are
        // left out because they can carry paths.
        LlmError::new(code, self.to_string())
    }
}

/// The message of [`AdapterError::ConfinementUnavailable`].
fn confinement_unavailable(offered: u8, needed: u8) -> String {
    let kernel = match offered {
        0 => "the kernel offers no Landlock".to_owned(),
        abi => format!("the kernel offers only Landlock ABI {abi}"),
    };
    format!(
        "confinement is required, but {kernel} and confining the server's files and signals \
         needs ABI {needed}; no server was started (set confinement to best_effort to run it \
         with what the kernel offers)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_errors_keep_only_their_code() {
        let remote = agent_client_protocol::Error::new(
            agent_client_protocol::ErrorCode::INTERNAL_ERROR,
            "secret token abc123 leaked in a stack trace",
        );
        let error = AdapterError::remote("session/prompt", &remote).to_llm_error();
        assert_eq!(error.code, LlmErrorCode::AcpRpcError);
        assert!(!error.message.contains("abc123"), "{}", error.message);
        assert!(error.message.contains("-32603"), "{}", error.message);
    }

    #[test]
    fn a_platform_google_ships_nothing_for_is_its_own_code() {
        let error = AdapterError::Install {
            reason: "unsupported_platform",
            message: "Google ships no 1.3.0 build for freebsd-x86_64".to_owned(),
        }
        .to_llm_error();
        assert_eq!(error.code, LlmErrorCode::AcpPlatformUnsupported);
        assert!(
            error.message.contains("freebsd-x86_64"),
            "{}",
            error.message
        );
        let other = AdapterError::Install {
            reason: "digest_mismatch",
            message: String::new(),
        };
        assert_eq!(other.to_llm_error().code, LlmErrorCode::AcpInstallFailed);
    }

    #[test]
    fn confinement_failures_have_their_own_code_and_say_why() {
        let none = AdapterError::ConfinementUnavailable {
            offered: 0,
            needed: 6,
        }
        .to_llm_error();
        assert_eq!(none.code, LlmErrorCode::AcpConfinementUnavailable);
        assert!(
            none.message.contains("offers no Landlock"),
            "{}",
            none.message
        );
        assert!(none.message.contains("needs ABI 6"), "{}", none.message);
        let old = AdapterError::ConfinementUnavailable {
            offered: 3,
            needed: 6,
        }
        .to_llm_error();
        assert!(
            old.message.contains("only Landlock ABI 3"),
            "{}",
            old.message
        );
        let failed = AdapterError::ConfinementFailed("the ruleset was refused").to_llm_error();
        assert_eq!(failed.code, LlmErrorCode::AcpConfinementUnavailable);
    }

    #[test]
    fn a_native_action_says_how_the_server_was_confined() {
        use crate::server::Enforcement;
        let message = |confinement| {
            AdapterError::NativeToolRejected {
                action: "a tool".to_owned(),
                confinement,
            }
            .to_llm_error()
            .message
        };
        let confined = message(Some(Enforcement::Confined { abi: 7 }));
        assert!(
            confined.contains("confined by the kernel (Landlock ABI 7)"),
            "{confined}"
        );
        let off = message(Some(Enforcement::Off));
        assert!(off.contains("unconfined (confinement is off)"), "{off}");
        let unavailable = message(Some(Enforcement::Unavailable));
        assert!(
            unavailable.contains("unconfined (the kernel offers no Landlock)"),
            "{unavailable}"
        );
        assert!(!message(None).contains("confined"));
    }

    /// What a first-time user meets says what to do, and keeps its code (issue 25 §4).
    #[test]
    fn first_time_errors_say_what_to_do() {
        let confined = AdapterError::ClosedWhileConfined {
            method: "initialize",
            confinement: crate::server::Enforcement::Confined { abi: 6 },
        }
        .to_llm_error();
        assert_eq!(confined.code, LlmErrorCode::AcpDisconnected);
        for words in [
            "during initialize",
            "ran confined",
            "Landlock ABI 6",
            "allowRead",
            "confinement to off",
        ] {
            assert!(
                confined.message.contains(words),
                "{words}: {}",
                confined.message
            );
        }
        let offline = AdapterError::Install {
            reason: "network",
            message: "the download failed".into(),
        }
        .to_llm_error();
        assert!(
            offline.message.contains("check the network"),
            "{}",
            offline.message
        );
        assert!(offline.message.contains("doctor"), "{}", offline.message);
        // A full disk is an install failure that names both figures and what to do.
        let full = crate::install::InstallError::InsufficientSpace {
            needed: 1_668_635_750,
            available: 104_857_600,
            dir: "/cache".into(),
        };
        let full = AdapterError::Install {
            reason: full.reason(),
            message: full.to_string(),
        }
        .to_llm_error();
        assert_eq!(full.code, LlmErrorCode::AcpInstallFailed);
        for words in [
            "(insufficient_space)",
            "needs 1.6 GiB (1668635750 bytes",
            "has 100.0 MiB (104857600 bytes) free",
            "set `cacheDir` to a folder on a disk with room",
        ] {
            assert!(full.message.contains(words), "{words}: {}", full.message);
        }
        let model = AdapterError::ModelUnavailable("gemini-9".into()).to_llm_error();
        assert_eq!(model.code, LlmErrorCode::AcpInvalidModel);
        assert!(
            model.message.contains("server-default"),
            "{}",
            model.message
        );
        let sign_in =
            AdapterError::AuthRequired(crate::acp::SignInProblem::NoBrowser).to_llm_error();
        assert!(sign_in.message.contains("sign in"), "{}", sign_in.message);
    }

    #[test]
    fn spawn_failures_do_not_quote_the_io_error() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "/home/alice/secret/path");
        let error = AdapterError::Spawn(io).to_llm_error();
        assert_eq!(error.code, LlmErrorCode::AcpBinaryMissing);
        assert!(!error.message.contains("alice"));
        let denied = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "/home/alice");
        let error = AdapterError::Spawn(denied).to_llm_error();
        assert_eq!(error.code, LlmErrorCode::AcpSpawnFailed);
        assert!(!error.message.contains("alice"));
    }
}
