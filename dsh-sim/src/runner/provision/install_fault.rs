//! The scenario's install fault (`install.fault`), the runner's side: which starting
//! state each fault needs (a good install, damaged first for `kill_installer` at
//! `retire`), the `swap_file_before_launch` swap itself (the installed server member
//! changed right after the chat's first launch check passed), and the next attempt after
//! the chat, which must leave a verified install whatever the fault did.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use antigravity_acp::install::{CURRENT_DIR, InstallOptions, InstallOutcome, Installer};

use super::archive_builder::{HARNESS_MEMBER, SERVER_MEMBER, STAND_IN_MARK, member_here};
use crate::scenario::{CacheStep, InstallFault, InstallOutcomeKind, KillStep};

/// The comment the good server member carries, and what the swap turns it into (same
/// length, so only the content and the stat identity change, not the size).
const ORIGINAL_MARK: &[u8] = STAND_IN_MARK;
const SWAPPED_MARK: &[u8] = b"# Swapped-in  ";

/// Whether the chat can start from an empty cache under `fault`.
pub fn starts_empty(fault: Option<InstallFault>) -> bool {
    !matches!(
        fault,
        Some(InstallFault::KillInstaller { .. } | InstallFault::SwapFileBeforeLaunch)
    )
}

/// Whether `fault` needs a good install before the chat even without damage.
pub fn needs_good_install(fault: Option<InstallFault>) -> bool {
    fault == Some(InstallFault::SwapFileBeforeLaunch)
}

/// The damage done to a good install before the chat: the scenario's `cache` steps, or,
/// for `kill_installer` at `retire` without any, a flipped harness byte (so the killed
/// installer repairs, the only install that retires one).
pub fn damage_before(fault: Option<InstallFault>, cache: &[CacheStep]) -> Vec<CacheStep> {
    let retire = fault
        == Some(InstallFault::KillInstaller {
            at_step: KillStep::Retire,
        });
    if retire && cache.is_empty() {
        return vec![CacheStep::FlipByte(HARNESS_MEMBER.to_owned())];
    }
    cache.to_vec()
}

/// The `swap_file_before_launch` swap, armed for the first launch check that passes.
#[derive(Debug)]
pub struct SwapPlan {
    path: PathBuf,
    swapped: Vec<u8>,
    armed: AtomicBool,
}

impl SwapPlan {
    /// A swap of the server member installed in `cache`; `members` are the archive's.
    pub fn new(cache: &Path, members: &[(String, Vec<u8>, bool)]) -> Result<Self, String> {
        let original = members
            .iter()
            .find(|(name, _, _)| *name == member_here(SERVER_MEMBER))
            .map(|(_, content, _)| content.clone())
            .ok_or("the archive has no server member to swap")?;
        let at = original
            .windows(ORIGINAL_MARK.len())
            .position(|w| w == ORIGINAL_MARK)
            .ok_or("the server member has no mark to swap")?;
        let mut swapped = original;
        swapped[at..at + SWAPPED_MARK.len()].copy_from_slice(SWAPPED_MARK);
        Ok(Self {
            path: cache.join(CURRENT_DIR).join(member_here(SERVER_MEMBER)),
            swapped,
            armed: AtomicBool::new(true),
        })
    }

    /// Changes the installed server member in place, once (the first call).
    pub fn strike(&self) {
        if !self.armed.swap(false, Ordering::SeqCst) {
            return;
        }
        if let Err(error) = std::fs::write(&self.path, &self.swapped) {
            tracing::warn!(%error, "the swap fault could not change the server");
        }
    }
}

/// The launch after the chat, as the next turn would make it (an in-process
/// `Installer::ensure` with the chat's options): what it did, or the installer's reason.
pub async fn next_attempt(options: &InstallOptions) -> Result<InstallOutcomeKind, String> {
    let quiet = InstallOptions {
        progress: None,
        ..options.clone()
    };
    let installer = Installer::new(quiet).map_err(|e| e.reason().to_owned())?;
    match installer.ensure().await {
        Ok(report) => Ok(match report.outcome {
            InstallOutcome::Installed => InstallOutcomeKind::Installed,
            InstallOutcome::Reused => InstallOutcomeKind::Reused,
            InstallOutcome::Repaired { .. } => InstallOutcomeKind::Repaired,
        }),
        Err(error) => Err(error.reason().to_owned()),
    }
}
