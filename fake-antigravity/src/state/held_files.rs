//! The session files the fake holds open while it runs, as 1.3.0's SQLite holds a
//! session's `conversations/<id>.db`, `.db-wal` and `.db-shm` (`session_new.
//! hold_conversation_files`, B08), and the check that one of them vanished from under the
//! live process: its path no longer names the file the fake holds (removed, or replaced by
//! another file). Each vanished file is reported once, with the session it belongs to.
//!
//! On Unix a path still names the held file when the device and inode agree; elsewhere
//! (Windows, where a file held open is only marked for deletion) when the path still
//! exists.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A file held open, with the session it belongs to.
#[derive(Debug)]
struct HeldFile {
    session_id: String,
    path: PathBuf,
    file: File,
}

/// A held file whose path no longer names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VanishedFile {
    /// The session the file belongs to.
    pub session_id: String,
    /// Where it was.
    pub path: PathBuf,
}

/// Every session file the process holds open, until it exits.
#[derive(Debug, Default)]
pub struct HeldConversationFiles {
    held: Mutex<Vec<HeldFile>>,
}

impl HeldConversationFiles {
    /// Opens `paths` (for reading) and holds them for `session_id`; a path that cannot be
    /// opened is returned as the error, the ones before it stay held.
    pub fn hold(&self, session_id: &str, paths: &[PathBuf]) -> std::io::Result<()> {
        for path in paths {
            let file = File::open(path)?;
            self.lock().push(HeldFile {
                session_id: session_id.to_owned(),
                path: path.clone(),
                file,
            });
        }
        Ok(())
    }

    /// The held files whose paths no longer name them, each reported (and let go of)
    /// once.
    pub fn vanished(&self) -> Vec<VanishedFile> {
        let mut held = self.lock();
        let (gone, kept): (Vec<HeldFile>, Vec<HeldFile>) =
            held.drain(..).partition(|h| !still_names(&h.path, &h.file));
        *held = kept;
        gone.into_iter()
            .map(|h| VanishedFile {
                session_id: h.session_id,
                path: h.path,
            })
            .collect()
    }

    /// How many files are held.
    pub fn count(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<HeldFile>> {
        match self.held.lock() {
            Ok(held) => held,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

/// Whether `path` still names the open `file`.
#[cfg(unix)]
fn still_names(path: &Path, file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(path), file.metadata()) {
        (Ok(now), Ok(held)) => now.dev() == held.dev() && now.ino() == held.ino(),
        _ => false,
    }
}

/// Whether `path` still names the open `file`.
#[cfg(not(unix))]
fn still_names(path: &Path, _file: &File) -> bool {
    std::fs::metadata(path).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_or_replaced_file_is_reported_once_and_a_kept_one_never() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let [kept, removed, replaced] =
            ["a.db", "a.db-wal", "a.db-shm"].map(|n| dir.path().join(n));
        for path in [&kept, &removed, &replaced] {
            std::fs::write(path, b"x")?;
        }
        let held = HeldConversationFiles::default();
        held.hold("s1", &[kept.clone(), removed.clone(), replaced.clone()])?;
        assert_eq!(held.vanished(), []);

        std::fs::remove_file(&removed)?;
        std::fs::remove_file(&replaced)?;
        // Written anew while the old file is still held open: another inode on Unix.
        std::fs::write(&replaced, b"y")?;
        let vanished: Vec<PathBuf> = held.vanished().into_iter().map(|v| v.path).collect();
        if cfg!(unix) {
            assert_eq!(vanished, [removed, replaced]);
        } else {
            assert_eq!(vanished, [removed]);
        }
        assert_eq!(held.vanished(), [], "each is reported once");
        assert_eq!(held.count(), if cfg!(unix) { 1 } else { 2 });
        Ok(())
    }

    #[test]
    fn a_missing_file_cannot_be_held() {
        let held = HeldConversationFiles::default();
        assert!(
            held.hold("s1", &[PathBuf::from("/nonexistent/held.db")])
                .is_err()
        );
        assert_eq!(held.count(), 0);
    }
}
