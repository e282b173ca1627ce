//! The files 1.3.0 keeps on disk for each session (docs/antigravity-1.3.0.md §2; B08),
//! under `<home>/antigravity-acp/`: `conversations/<id>.db` (SQLite in WAL mode, with its
//! `.db-wal` and `.db-shm`), `conversations/<id>.meta` (`{"cwd":"<session cwd>"}`) and
//! the folder `brain/<id>/` (plan and task artifacts). Every prompt grows the history: the
//! fake appends the prompt's text to `<id>.db-wal`. The contents are stand-ins (a SQLite
//! header, zeroed shared memory, the prompts as text); their names and places are the real
//! server's. Whether they are written at all (`session_new.conversation_files`, a set
//! `$GEMINI_HOME`) is the caller's decision.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The first 16 bytes of every SQLite database file.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// The size of the stand-in `.db-shm` (SQLite's shared-memory index starts at 32 KiB).
const SHM_BYTES: usize = 32 * 1024;

/// The conversation files of one home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationFiles {
    /// `<home>/antigravity-acp`.
    state_dir: PathBuf,
}

impl ConversationFiles {
    /// The conversation files under `home` (a `GEMINI_HOME`).
    pub fn new(home: &Path) -> Self {
        Self {
            state_dir: home.join("antigravity-acp"),
        }
    }

    /// `conversations/<session_id>` plus `suffix` (`.db`, `.db-wal`, `.db-shm`, `.meta`).
    pub fn conversation_file(&self, session_id: &str, suffix: &str) -> PathBuf {
        self.state_dir
            .join("conversations")
            .join(format!("{session_id}{suffix}"))
    }

    /// The files SQLite holds open while the server runs: `<id>.db`, `.db-wal`, `.db-shm`.
    pub fn sqlite_files(&self, session_id: &str) -> Vec<PathBuf> {
        [".db", ".db-wal", ".db-shm"]
            .iter()
            .map(|suffix| self.conversation_file(session_id, suffix))
            .collect()
    }

    /// `brain/<session_id>/`.
    pub fn brain_dir(&self, session_id: &str) -> PathBuf {
        self.state_dir.join("brain").join(session_id)
    }

    /// Writes the files of a new session (the folders are made as needed; existing files
    /// are replaced). `session_id` must be a server-made id (a UUID): it becomes a file
    /// name.
    pub fn create(&self, session_id: &str, cwd: &str) -> std::io::Result<()> {
        std::fs::create_dir_all(self.state_dir.join("conversations"))?;
        let mut database = SQLITE_HEADER.to_vec();
        database.resize(4096, 0);
        std::fs::write(self.conversation_file(session_id, ".db"), database)?;
        std::fs::write(self.conversation_file(session_id, ".db-wal"), b"")?;
        std::fs::write(
            self.conversation_file(session_id, ".db-shm"),
            vec![0u8; SHM_BYTES],
        )?;
        let meta = serde_json::json!({ "cwd": cwd }).to_string();
        std::fs::write(self.conversation_file(session_id, ".meta"), meta)?;
        let brain = self.brain_dir(session_id);
        std::fs::create_dir_all(&brain)?;
        std::fs::write(
            brain.join("task.md"),
            "# Task\n\n(fake-antigravity: the session's task artifact)\n",
        )
    }

    /// Appends a prompt's text blocks to `<session_id>.db-wal`, each followed by a line
    /// break (the file is made if it is missing, as SQLite would).
    pub fn append_prompt(&self, session_id: &str, texts: &[&str]) -> std::io::Result<()> {
        let mut wal = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.conversation_file(session_id, ".db-wal"))?;
        let mut record = String::new();
        for text in texts {
            record.push_str(text);
            record.push('\n');
        }
        wal.write_all(record.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_gets_its_five_things_and_its_prompts_grow_the_wal() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let files = ConversationFiles::new(home.path());
        files.create("4d5a6c89", "/work/project")?;
        let conversations = home.path().join("antigravity-acp/conversations");
        let database = std::fs::read(conversations.join("4d5a6c89.db"))?;
        assert!(database.starts_with(SQLITE_HEADER));
        assert_eq!(std::fs::read(conversations.join("4d5a6c89.db-wal"))?, b"");
        assert!(conversations.join("4d5a6c89.db-shm").is_file());
        let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
            conversations.join("4d5a6c89.meta"),
        )?)?;
        assert_eq!(meta, serde_json::json!({"cwd": "/work/project"}));
        let brain = home.path().join("antigravity-acp/brain/4d5a6c89");
        assert!(brain.join("task.md").is_file(), "a non-empty folder");

        files.append_prompt("4d5a6c89", &["first", "second"])?;
        files.append_prompt("4d5a6c89", &["third"])?;
        assert_eq!(
            std::fs::read_to_string(conversations.join("4d5a6c89.db-wal"))?,
            "first\nsecond\nthird\n"
        );
        Ok(())
    }

    /// A home the fake cannot write into (here `antigravity-acp` is a file, which stops
    /// root as well as anyone else) is an error, not a panic.
    #[test]
    fn an_unwritable_home_is_an_error() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        std::fs::write(home.path().join("antigravity-acp"), "not a folder")?;
        let files = ConversationFiles::new(home.path());
        assert!(files.create("s1", "/").is_err());
        assert!(files.append_prompt("s1", &["x"]).is_err());
        Ok(())
    }
}
