//! The install check of `doctor` and `status`, through the installer's public API
//! ([`Installer`]): for the pinned build, whether it is there, its archive digest against
//! the pin (or the `sha256` override) and its launch line (the archive's server and
//! harness), every file hashed in full (`doctor`) or the quick check every launch runs
//! (`status`). Nothing is downloaded unless asked (`doctor --install`,
//! [`Installer::ensure_verified`]: every file hashed to decide, so it repairs whatever the
//! full check would find).
//! An explicit `server` command has no install to check.

use crate::config::{AdapterConfig, ServerSource};
use crate::install::{Installer, Receipt};

use super::report::{Check, CheckStatus};

/// How deep the check looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Depth {
    /// The launch's quick check (`status`).
    Quick,
    /// Every file hashed (`doctor`).
    Full,
}

/// The fix for a missing or broken install.
const INSTALL_FIX: &str = "antigravity-acp-dsh doctor --install (downloads the pinned 1.3.0 \
                           build once, checks it against its pinned digest, repairs a broken one)";

/// Checks the install (`install`: make or repair it first, `doctor --install`).
pub(crate) async fn install_check(config: &AdapterConfig, depth: Depth, install: bool) -> Check {
    let options = match &config.server {
        ServerSource::Command(command) => {
            return Check::new(
                "install",
                CheckStatus::Skip,
                "explicit server command",
                format!(
                    "not used: the config names a server command ({})",
                    command.program.display()
                ),
            );
        }
        ServerSource::Installed(options) => options.clone(),
    };
    let installer = match Installer::new(options) {
        Ok(installer) => installer,
        Err(error) => {
            return Check::new(
                "install",
                CheckStatus::Fail,
                "cannot install here",
                format!("no install is possible: {error} ({})", error.reason()),
            )
            .fix("name a server command (--server) or a cacheDir the user can write");
        }
    };
    // `doctor --install` decides on every file hashed: what the full check would call
    // broken is repaired, not reused because the quick check trusts it.
    if install && let Err(error) = installer.ensure_verified().await {
        return Check::new(
            "install",
            CheckStatus::Fail,
            "install failed",
            format!("the install failed: {error} ({})", error.reason()),
        )
        .fix("check the network (or the registry and sha256 settings), then run it again");
    }
    let pin = if config_has_override(config) {
        "the sha256 override"
    } else {
        "the built-in 1.3.0 pin"
    };
    let found = match depth {
        Depth::Quick => installer.check().await.map(|server| server.dir),
        Depth::Full => {
            let verified = installer.verify().await;
            match verified.differences.split_first() {
                None => Ok(verified.dir),
                Some((first, [])) => Err(first.clone()),
                Some((first, rest)) => Err(format!("{first} (and {} more)", rest.len())),
            }
        }
    };
    let dir = installer.cache_dir().join(crate::install::CURRENT_DIR);
    match found {
        Ok(dir) => {
            let digest = Receipt::read(&dir)
                .map(|receipt| short(&receipt.archive_sha256))
                .unwrap_or_default();
            let how = match depth {
                Depth::Quick => "its receipt, sizes, modes and file identities checked",
                Depth::Full => "every file hashed against its receipt",
            };
            Check::new(
                "install",
                CheckStatus::Ok,
                "installed",
                format!(
                    "the pinned server at {} ({how}; archive sha256 {digest}, as {pin} says; \
                     it launches the archive's server)",
                    dir.display()
                ),
            )
        }
        Err(why) if Receipt::read(&dir).is_err() => Check::new(
            "install",
            CheckStatus::Fail,
            "not installed",
            format!(
                "the pinned server is not installed in {} ({why})",
                dir.display()
            ),
        )
        .fix(INSTALL_FIX),
        Err(why) => Check::new(
            "install",
            CheckStatus::Fail,
            "broken",
            format!("the install at {} fails its check: {why}", dir.display()),
        )
        .fix(INSTALL_FIX),
    }
}

fn config_has_override(config: &AdapterConfig) -> bool {
    matches!(&config.server, ServerSource::Installed(options) if options.sha256_override.is_some())
}

/// The first 12 hex digits of a digest, then an ellipsis.
fn short(digest: &str) -> String {
    match digest.get(..12) {
        Some(head) if digest.len() > 12 => format!("{head}…"),
        _ => digest.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServerCommand;

    #[test]
    fn a_digest_is_shown_by_its_first_twelve_hex_digits() {
        let digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        assert_eq!(short(digest), "0123456789ab…");
        assert_eq!(short("0123456789abc"), "0123456789ab…");
        assert_eq!(short("0123456789ab"), "0123456789ab");
        assert_eq!(short("abc"), "abc");
    }

    /// Hashed (`doctor`): an intact install is installed, a changed file makes it broken,
    /// naming the file, and an install that is not there is not installed.
    #[tokio::test]
    async fn an_install_is_installed_then_broken_then_not_installed() -> crate::TestResult {
        let fixture = crate::install::tests::Installed::new(b"#!/bin/sh\n").await?;
        let config = AdapterConfig {
            server: ServerSource::Installed(fixture.options.clone()),
            ..AdapterConfig::default()
        };
        let intact = install_check(&config, Depth::Full, false).await;
        assert_eq!(intact.status, CheckStatus::Ok, "{intact:?}");
        assert_eq!(intact.brief, "installed");
        assert!(
            intact.detail.contains("the sha256 override"),
            "{}",
            intact.detail
        );

        let harness = fixture.harness()?;
        let mut bytes = std::fs::read(&harness)?;
        bytes[0] ^= 1;
        std::fs::write(&harness, bytes)?;
        let broken = install_check(&config, Depth::Full, false).await;
        assert_eq!(broken.status, CheckStatus::Fail, "{broken:?}");
        assert_eq!(broken.brief, "broken");
        let name = harness
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        assert!(
            name.as_deref().is_some_and(|n| broken.detail.contains(n)),
            "{}",
            broken.detail
        );

        std::fs::remove_dir_all(fixture.cache.path().join(crate::install::CURRENT_DIR))?;
        let gone = install_check(&config, Depth::Full, false).await;
        assert_eq!(gone.status, CheckStatus::Fail, "{gone:?}");
        assert_eq!(gone.brief, "not installed");
        Ok(())
    }

    #[test]
    fn only_an_installed_server_with_a_digest_of_the_configs_has_an_override() {
        let mut options = crate::install::InstallOptions::default();
        assert!(!config_has_override(&AdapterConfig {
            server: ServerSource::Installed(options.clone()),
            ..AdapterConfig::default()
        }));
        options.sha256_override = Some("ab".repeat(32));
        assert!(config_has_override(&AdapterConfig {
            server: ServerSource::Installed(options),
            ..AdapterConfig::default()
        }));
        assert!(!config_has_override(&AdapterConfig {
            server: ServerCommand {
                program: "agy".into(),
                args: Vec::new(),
                env: Vec::new(),
            }
            .into(),
            ..AdapterConfig::default()
        }));
    }
}
