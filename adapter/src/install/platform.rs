//! The pinned build: its version, the registry's platform keys, the known SHA-256 of each
//! 1.3.0 archive (B03), and the members every archive must hold.

use super::error::InstallError;

/// The server version this adapter is pinned to.
pub const PINNED_VERSION: &str = "1.3.0";

/// The registry id of Google's server.
pub const AGENT_ID: &str = "antigravity-acp";

/// The SHA-256 of each 1.3.0 archive, by registry platform key. Pinned independently by
/// two third parties (see `docs/antigravity-1.3.0.md`); the registry itself publishes
/// none.
pub const PINNED_ARCHIVE_SHA256: [(&str, &str); 6] = [
    (
        "linux-x86_64",
        "9fb60956af0a9d76220a4db91ca9ac88e2a2372ad68f985ab5fceace6b825b96",
    ),
    (
        "linux-aarch64",
        "500b0bc0fb858e88f4df404d4cedf80bf9298c178291e39e383d6c50b111cbdf",
    ),
    (
        "darwin-aarch64",
        "7cd97045f7b4fe81175a107cdf16f9c51484e3c78a5162cae415338bb6aa5b88",
    ),
    (
        "darwin-x86_64",
        "bb23956b89984bf5d354af2c3725e6c57f0cc1b7228e77a0e91c9c2bc1d47646",
    ),
    (
        "windows-x86_64",
        "65215e0688681fa3116e048a9eab27ef53af1bbd6f3da3f1c52bd4911d8b17f9",
    ),
    (
        "windows-aarch64",
        "4a0f469720e9beb9438a979f543fdbfad5022ebe0992c052c590bd78b3144ca3",
    ),
];

/// The pinned digest of `platform`'s archive.
pub fn pinned_digest(platform: &str) -> Option<&'static str> {
    PINNED_ARCHIVE_SHA256
        .iter()
        .find(|(key, _)| *key == platform)
        .map(|(_, digest)| *digest)
}

/// This machine's registry platform key (`linux-x86_64`, `darwin-aarch64`, ...).
pub fn current_platform() -> Result<&'static str, InstallError> {
    platform_key(std::env::consts::OS, std::env::consts::ARCH)
}

/// The registry key for an OS and architecture as Rust names them.
pub fn platform_key(os: &str, arch: &str) -> Result<&'static str, InstallError> {
    Ok(match (os, arch) {
        ("linux", "x86_64") => "linux-x86_64",
        ("linux", "aarch64") => "linux-aarch64",
        ("macos", "aarch64") => "darwin-aarch64",
        ("macos", "x86_64") => "darwin-x86_64",
        ("windows", "x86_64") => "windows-x86_64",
        ("windows", "aarch64") => "windows-aarch64",
        _ => return Err(InstallError::UnsupportedPlatform(format!("{os}-{arch}"))),
    })
}

/// The two members every archive must hold at its root: the server and its harness.
pub fn required_members(platform: &str) -> [&'static str; 2] {
    if platform.starts_with("windows") {
        ["agy_acp_server.exe", "localharness_external.exe"]
    } else {
        ["agy_acp_server.par", "localharness_external"]
    }
}

/// Checks that `digest` is 64 hex digits and returns it lowercased.
pub fn parse_digest(digest: &str) -> Result<String, InstallError> {
    let trimmed = digest.trim();
    if trimmed.len() == 64 && trimmed.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(trimmed.to_ascii_lowercase())
    } else {
        Err(InstallError::BadDigest(trimmed.chars().take(80).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_linux_x86_64_pin_is_the_published_digest() {
        assert_eq!(
            pinned_digest("linux-x86_64"),
            Some("9fb60956af0a9d76220a4db91ca9ac88e2a2372ad68f985ab5fceace6b825b96")
        );
        assert_eq!(
            pinned_digest("windows-aarch64"),
            Some("4a0f469720e9beb9438a979f543fdbfad5022ebe0992c052c590bd78b3144ca3")
        );
        assert_eq!(pinned_digest("plan9-mips"), None);
    }

    /// All six, as two third parties published them (docs/antigravity-1.3.0.md §1).
    #[test]
    fn every_pin_is_the_published_digest() {
        let published = [
            (
                "linux-x86_64",
                "9fb60956af0a9d76220a4db91ca9ac88e2a2372ad68f985ab5fceace6b825b96",
            ),
            (
                "linux-aarch64",
                "500b0bc0fb858e88f4df404d4cedf80bf9298c178291e39e383d6c50b111cbdf",
            ),
            (
                "darwin-aarch64",
                "7cd97045f7b4fe81175a107cdf16f9c51484e3c78a5162cae415338bb6aa5b88",
            ),
            (
                "darwin-x86_64",
                "bb23956b89984bf5d354af2c3725e6c57f0cc1b7228e77a0e91c9c2bc1d47646",
            ),
            (
                "windows-x86_64",
                "65215e0688681fa3116e048a9eab27ef53af1bbd6f3da3f1c52bd4911d8b17f9",
            ),
            (
                "windows-aarch64",
                "4a0f469720e9beb9438a979f543fdbfad5022ebe0992c052c590bd78b3144ca3",
            ),
        ];
        for (platform, digest) in published {
            assert_eq!(pinned_digest(platform), Some(digest), "{platform}");
        }
    }

    #[test]
    fn every_pin_is_a_well_formed_digest() -> crate::TestResult {
        for (platform, digest) in PINNED_ARCHIVE_SHA256 {
            assert_eq!(parse_digest(digest)?, digest, "{platform}");
        }
        Ok(())
    }

    #[test]
    fn platform_keys_follow_the_registry() -> crate::TestResult {
        for ((os, arch), key) in [
            (("linux", "x86_64"), "linux-x86_64"),
            (("linux", "aarch64"), "linux-aarch64"),
            (("macos", "aarch64"), "darwin-aarch64"),
            (("macos", "x86_64"), "darwin-x86_64"),
            (("windows", "x86_64"), "windows-x86_64"),
            (("windows", "aarch64"), "windows-aarch64"),
        ] {
            assert_eq!(platform_key(os, arch)?, key);
            assert!(pinned_digest(key).is_some(), "{key} has no pin");
        }
        assert!(platform_key("freebsd", "x86_64").is_err());
        Ok(())
    }

    #[test]
    fn digests_are_checked_for_shape() {
        assert!(parse_digest("abc").is_err());
        assert!(parse_digest(&"g".repeat(64)).is_err());
        assert!(parse_digest(&"A".repeat(64)).is_ok_and(|d| d == "a".repeat(64)));
    }

    #[test]
    fn windows_members_are_executables() {
        assert_eq!(
            required_members("windows-x86_64"),
            ["agy_acp_server.exe", "localharness_external.exe"]
        );
        assert_eq!(
            required_members("linux-x86_64"),
            ["agy_acp_server.par", "localharness_external"]
        );
    }
}
