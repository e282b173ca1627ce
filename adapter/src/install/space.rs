//! The free-space check before the archive download (issue 36 §5): what an install needs
//! on the cache's disk ([`needed_for`]: the archive, plus what it unpacks to, estimated as
//! [`UNPACKED_FACTOR`] times the archive), what the disk has ([`FreeSpaceProbe`], by
//! default `fs4::available_space`, the bytes an unprivileged user may still write), and
//! the refusal ([`InstallError::InsufficientSpace`]) naming both figures.
//!
//! The estimate: the pinned 1.3.0 archive is 333,727,150 bytes and unpacks to about 0.93 GB
//! (its server alone is 926,533,965 bytes), 2.8 times the archive; 4 times leaves a margin
//! for the receipt, the file system's blocks and a next build. The archive and the
//! unpacked files are on the disk together until the archive is removed after extraction.
//! When the download announces no length, the pinned archive's size stands in for it.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use super::error::InstallError;

/// What the unpacked install is estimated to need, as a multiple of the archive's size.
pub const UNPACKED_FACTOR: u64 = 4;

/// The pinned 1.3.0 archive's size (linux-x86_64), used when a download announces none.
pub const PINNED_ARCHIVE_BYTES: u64 = 333_727_150;

/// Answers how many bytes may still be written on the disk that holds a folder. Tests
/// inject one; `None` in [`InstallOptions`](super::InstallOptions) asks the disk itself.
#[derive(Clone)]
pub struct FreeSpaceProbe(pub Arc<AvailableBytes>);

/// The probe's function: the bytes free for this user on the disk holding a folder.
pub type AvailableBytes = dyn Fn(&Path) -> std::io::Result<u64> + Send + Sync;

impl fmt::Debug for FreeSpaceProbe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FreeSpaceProbe")
    }
}

/// The bytes an install needs for an archive of `archive` bytes (`None`: not announced):
/// the archive plus [`UNPACKED_FACTOR`] times it.
pub fn needed_for(archive: Option<u64>) -> u64 {
    let archive = archive.unwrap_or(PINNED_ARCHIVE_BYTES);
    archive.saturating_add(archive.saturating_mul(UNPACKED_FACTOR))
}

/// Refuses the download when the disk holding `dir` has less free space than an archive
/// of `archive` bytes needs. A disk that cannot say (an unusual file system) is not
/// refused: the download's own writes report a full disk.
pub(crate) fn check_free_space(
    dir: &Path,
    archive: Option<u64>,
    probe: Option<&FreeSpaceProbe>,
) -> Result<(), InstallError> {
    let available = match probe {
        Some(probe) => (probe.0)(dir),
        None => fs4::available_space(dir),
    };
    let available = match available {
        Ok(bytes) => bytes,
        Err(error) => {
            tracing::debug!(kind = ?error.kind(), "the cache's free space is unknown; not checked");
            return Ok(());
        }
    };
    let needed = needed_for(archive);
    if available < needed {
        return Err(InstallError::InsufficientSpace {
            needed,
            available,
            dir: dir.to_path_buf(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(bytes: u64) -> FreeSpaceProbe {
        FreeSpaceProbe(Arc::new(move |_dir: &Path| Ok(bytes)))
    }

    #[test]
    fn an_install_needs_the_archive_and_four_times_it() {
        assert_eq!(needed_for(Some(100)), 500);
        assert_eq!(needed_for(None), 5 * PINNED_ARCHIVE_BYTES);
        assert_eq!(needed_for(Some(u64::MAX)), u64::MAX);
    }

    #[test]
    fn too_little_space_is_refused_naming_both_figures() -> crate::TestResult {
        let dir = Path::new("/cache");
        let refused = check_free_space(dir, Some(1_000_000), Some(&probe(4_999_999)));
        let Err(error) = refused else {
            return Err("one byte short was not refused".into());
        };
        assert_eq!(error.reason(), "insufficient_space");
        let text = error.to_string();
        assert!(text.contains("needs 4.8 MiB (5000000 bytes:"), "{text}");
        assert!(text.contains("has 4.8 MiB (4999999 bytes) free"), "{text}");
        assert!(text.contains("/cache"), "{text}");
        assert!(check_free_space(dir, Some(1_000_000), Some(&probe(5_000_000))).is_ok());
        Ok(())
    }

    #[test]
    fn a_disk_that_cannot_say_is_not_refused() {
        let unknown = FreeSpaceProbe(Arc::new(|_dir: &Path| {
            Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
        }));
        assert!(check_free_space(Path::new("/x"), None, Some(&unknown)).is_ok());
    }

    #[test]
    fn the_real_disk_answers() -> crate::TestResult {
        let dir = tempfile::tempdir()?;
        assert!(fs4::available_space(dir.path())? > 0);
        // A need no disk has is refused by the real probe too.
        let refused = check_free_space(dir.path(), Some(u64::MAX / 8), None);
        assert!(
            matches!(refused, Err(InstallError::InsufficientSpace { .. })),
            "{refused:?}"
        );
        Ok(())
    }
}
