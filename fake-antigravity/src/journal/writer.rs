//! Writing the journal file: `<dir>/<start-unix-nanos, 20 digits>-<pid>.jsonl`, one
//! [`JournalEntry`] per line. Each line goes to the kernel in one `write` as soon as it is
//! recorded (no user-space buffer), so a SIGKILLed fake leaves every line written so far.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::journal::JournalEntry;

/// Why the journal could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The directory could not be created.
    #[error("cannot create journal directory {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file could not be created.
    #[error("cannot create journal file {path}: {source}")]
    CreateFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// An open journal file. Shared by every part of the fake through an `Arc`.
#[derive(Debug)]
pub struct JournalWriter {
    path: PathBuf,
    file: Mutex<File>,
}

impl JournalWriter {
    /// Creates `dir` if missing and opens this process's journal file in it.
    pub fn create_in(dir: &Path) -> Result<Self, JournalError> {
        std::fs::create_dir_all(dir).map_err(|source| JournalError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let path = dir.join(format!("{nanos:020}-{}.jsonl", std::process::id()));
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(|source| JournalError::CreateFile {
                path: path.clone(),
                source,
            })?;
        Ok(Self {
            path,
            file: Mutex::new(file),
        })
    }

    /// The journal file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one entry as one line. A failing write is reported on stderr once per
    /// entry and otherwise ignored: the journal must never stop the fake.
    pub fn record(&self, entry: &JournalEntry) {
        let mut line = match serde_json::to_vec(entry) {
            Ok(line) => line,
            Err(e) => {
                eprintln!("fake-antigravity: cannot serialise journal entry: {e}");
                return;
            }
        };
        line.push(b'\n');
        let mut file = match self.file.lock() {
            Ok(file) => file,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Err(e) = file.write_all(&line) {
            eprintln!(
                "fake-antigravity: cannot write journal {}: {e}",
                self.path.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn writes_one_line_per_entry_readable_by_read_dir() {
        let dir = std::env::temp_dir().join(format!("fake-journal-test-{}", std::process::id()));
        let journal = JournalWriter::create_in(&dir).unwrap();
        journal.record(&JournalEntry::UnmatchedPrompt {
            prompt: "hi".into(),
        });
        journal.record(&JournalEntry::Exited {
            reason: "stdin closed".into(),
        });
        let name = journal
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        assert_eq!(name.split('-').next().unwrap().len(), 20);
        let all = crate::journal::read_dir(&dir).unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].len(), 2);
        // Closed first: Windows removes no folder holding an open file.
        drop(journal);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
