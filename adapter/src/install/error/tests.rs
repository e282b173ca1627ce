//! Every installer reason, pinned: scenarios, the CLI and DSH's `ACP_INSTALL_FAILED`
//! message carry these strings, so one never changes once released.

use std::time::Duration;

use super::*;

#[test]
fn every_reason_is_its_stable_string() {
    let io = std::io::Error::from(std::io::ErrorKind::NotFound);
    let cases = [
        (
            InstallError::AgentIndexUnavailable(String::new()),
            "registry_unavailable",
        ),
        (
            InstallError::AgentIndexMalformed(String::new()),
            "registry_malformed",
        ),
        (InstallError::AgentMissing, "agent_missing"),
        (
            InstallError::VersionMismatch {
                found: "1.4.0".into(),
                pinned: "1.3.0",
            },
            "version_mismatch",
        ),
        (
            InstallError::PlatformMissing(String::new()),
            "platform_missing",
        ),
        (
            InstallError::UnsupportedPlatform(String::new()),
            "unsupported_platform",
        ),
        (InstallError::InsecureUrl(String::new()), "insecure_url"),
        (InstallError::NotFound, "not_found"),
        (InstallError::HttpStatus(500), "http_status"),
        (InstallError::Network(String::new()), "network"),
        (InstallError::Stalled(Duration::from_secs(1)), "stalled"),
        (
            InstallError::Truncated {
                received: 1,
                expected: 2,
            },
            "truncated",
        ),
        (InstallError::TooLarge { cap: 1 }, "too_large"),
        (
            InstallError::DigestMismatch {
                actual: String::new(),
                expected: String::new(),
                source_of_pin: "the built-in 1.3.0 pin",
            },
            "digest_mismatch",
        ),
        (InstallError::BadDigest(String::new()), "bad_digest"),
        (InstallError::UnsafeArchive(String::new()), "unsafe_archive"),
        (
            InstallError::BadLaunchCommand(String::new()),
            "bad_launch_command",
        ),
        (InstallError::StillCorrupt(String::new()), "still_corrupt"),
        (InstallError::NoCacheDir, "no_cache_dir"),
        (InstallError::BadCacheDir(String::new()), "bad_cache_dir"),
        (
            InstallError::InsufficientSpace {
                needed: 2,
                available: 1,
                dir: "/x".into(),
            },
            "insufficient_space",
        ),
        (
            InstallError::io("open", std::path::Path::new("/x"), &io),
            "io",
        ),
    ];
    for (error, reason) in cases {
        assert_eq!(error.reason(), reason, "{error}");
    }
}
