//! `InstallError`: everything that can stop the installer, each with a stable reason
//! string (`InstallError::reason`) that scenarios, the CLI and DSH's `install_failed`
//! message use. Messages name what was missing or wrong; they never quote a server's
//! output or a remote body. The code calls the document the installer downloads from the
//! agent index; its reasons and messages keep the word users configure, `registry`.

use std::path::PathBuf;

/// Why the pinned server could not be installed or verified.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The agent index document could not be fetched (code `registry_unavailable`).
    #[error("cannot fetch the registry: {0}")]
    AgentIndexUnavailable(String),
    /// The agent index document is not an agent entry or an index of them (code
    /// `registry_malformed`).
    #[error("the registry document is malformed: {0}")]
    AgentIndexMalformed(String),
    /// The agent index has no `antigravity-acp` entry.
    #[error("the registry has no `antigravity-acp` entry")]
    AgentMissing,
    /// The agent index entry is another version than the pinned one.
    #[error("the registry offers antigravity-acp {found}, but this adapter is pinned to {pinned}")]
    VersionMismatch {
        /// The version the agent index offers.
        found: String,
        /// The pinned version.
        pinned: &'static str,
    },
    /// The entry has no binary for this machine's platform.
    #[error("the registry entry has no binary for platform `{0}`")]
    PlatformMissing(String),
    /// This machine's platform is not one the ACP registry format knows.
    #[error("this machine ({0}) is not a platform the registry serves")]
    UnsupportedPlatform(String),
    /// A URL is not HTTPS (plain HTTP is allowed only to loopback, when opted in).
    #[error(
        "refusing to download over {0}: only HTTPS is allowed (plain HTTP only to loopback, with --insecure-loopback)"
    )]
    InsecureUrl(String),
    /// The archive URL answered 404.
    #[error("the archive was not found (HTTP 404)")]
    NotFound,
    /// The archive URL answered another error status.
    #[error("the archive download failed with HTTP {0}")]
    HttpStatus(u16),
    /// The connection failed or broke.
    #[error("the archive download failed: {0}")]
    Network(String),
    /// No byte arrived for the stall bound.
    #[error("the archive download stalled (no data for {0:?})")]
    Stalled(std::time::Duration),
    /// The body ended before its announced length.
    #[error("the archive download was truncated ({received} of {expected} bytes)")]
    Truncated {
        /// Bytes received.
        received: u64,
        /// Bytes announced by Content-Length.
        expected: u64,
    },
    /// The body is larger than the cap (announced or actually sent).
    #[error("the archive is larger than the {cap}-byte cap")]
    TooLarge {
        /// The cap.
        cap: u64,
    },
    /// The archive's SHA-256 is not the pinned (or given) one.
    #[error(
        "the archive's SHA-256 {actual} does not match the expected {expected} ({source_of_pin})"
    )]
    DigestMismatch {
        /// What the archive hashes to.
        actual: String,
        /// What was expected.
        expected: String,
        /// Where the expectation came from (built-in pin, override, registry).
        source_of_pin: &'static str,
    },
    /// A SHA-256 given by the caller is not 64 hex digits.
    #[error("`{0}` is not a SHA-256 (64 hex digits)")]
    BadDigest(String),
    /// The archive breaks a validation rule; nothing was extracted.
    #[error("the archive is unsafe or incomplete: {0}")]
    UnsafeArchive(String),
    /// The registry's launch command is unusable (absolute, `..`, missing).
    #[error("the registry's launch command is unusable: {0}")]
    BadLaunchCommand(String),
    /// The cache is corrupt and a reinstall did not fix it.
    #[error("the installed server failed its check after a reinstall: {0}")]
    StillCorrupt(String),
    /// The cache directory cannot be determined (no HOME or cache dir).
    #[error("cannot determine a cache directory; set one explicitly")]
    NoCacheDir,
    /// The cache directory given or found is empty or relative.
    #[error("the cache directory is not usable: {0}")]
    BadCacheDir(String),
    /// The cache's disk has too little free space for the download and its unpacked files
    /// (checked before the download; `space::needed_for` says how the need is estimated).
    #[error(
        "not enough free space in {dir}: the install needs {} ({needed} bytes: the archive and, estimated, its unpacked files), the disk has {} ({available} bytes) free",
        super::size::format_bytes(*.needed),
        super::size::format_bytes(*.available),
        dir = .dir.display()
    )]
    InsufficientSpace {
        /// The bytes the install needs.
        needed: u64,
        /// The bytes the disk has free for this user.
        available: u64,
        /// The cache folder whose disk was asked.
        dir: PathBuf,
    },
    /// A filesystem operation on the cache failed.
    #[error("cannot {action} {path}: {kind}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// On what.
        path: PathBuf,
        /// The error's kind (its text may carry more than needed).
        kind: std::io::ErrorKind,
    },
}

impl InstallError {
    /// The stable reason, e.g. `digest_mismatch`.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::AgentIndexUnavailable(_) => "registry_unavailable",
            Self::AgentIndexMalformed(_) => "registry_malformed",
            Self::AgentMissing => "agent_missing",
            Self::VersionMismatch { .. } => "version_mismatch",
            Self::PlatformMissing(_) => "platform_missing",
            Self::UnsupportedPlatform(_) => "unsupported_platform",
            Self::InsecureUrl(_) => "insecure_url",
            Self::NotFound => "not_found",
            Self::HttpStatus(_) => "http_status",
            Self::Network(_) => "network",
            Self::Stalled(_) => "stalled",
            Self::Truncated { .. } => "truncated",
            Self::TooLarge { .. } => "too_large",
            Self::DigestMismatch { .. } => "digest_mismatch",
            Self::BadDigest(_) => "bad_digest",
            Self::UnsafeArchive(_) => "unsafe_archive",
            Self::BadLaunchCommand(_) => "bad_launch_command",
            Self::StillCorrupt(_) => "still_corrupt",
            Self::NoCacheDir => "no_cache_dir",
            Self::BadCacheDir(_) => "bad_cache_dir",
            Self::InsufficientSpace { .. } => "insufficient_space",
            Self::Io { .. } => "io",
        }
    }

    /// Whether trying the same download again may help.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            Self::Network(_) | Self::Stalled(_) | Self::Truncated { .. } => true,
            Self::HttpStatus(status) => *status >= 500 || *status == 408 || *status == 429,
            _ => false,
        }
    }

    /// An I/O failure on `path`, keeping only the error's kind.
    pub(crate) fn io(action: &'static str, path: &std::path::Path, error: &std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.to_path_buf(),
            kind: error.kind(),
        }
    }
}

#[cfg(test)]
mod tests;
