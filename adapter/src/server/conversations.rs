//! B08: no DSH conversation outlives its turn on disk. The server keeps, for every
//! session it opens, a copy of the conversation in its home
//! (`$GEMINI_HOME/antigravity-acp/conversations/<session>.db`, `.db-wal`, `.db-shm`,
//! `.meta`, and `brain/<session>/`; docs/antigravity-1.3.0.md §2). This module owns:
//! - the [`ConversationLedger`] each server process keeps beside its private scratch
//!   folder (`<scratch root>/antigravity-acp-XXXXXX.sessions`): the server's home, then
//!   one line per session the process opened, locked by its owner while the owner lives;
//! - removing those sessions' files once the process is done (never while it runs, so
//!   no live server's open SQLite files are pulled from under it, on any system);
//! - [`sweep`]: a provider's start removes what a crashed DSH process left, but only
//!   under ledgers it can lock (their owner is gone: the kernel released its lock);
//!   [`leftovers`] counts what it would remove (`antigravity-acp-dsh doctor`).
//!
//! It touches no file whose name it did not derive from a session id it recorded, and
//! only ids made of letters, digits, `-` and `_` name files at all.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::home::server_home;

/// What a ledger's name ends with, beside its scratch folder's name.
const LEDGER_SUFFIX: &str = ".sessions";
/// The scratch folders' (and so the ledgers') prefix (`ScratchDir`'s).
const SCRATCH_PREFIX: &str = "antigravity-acp-";
/// The server's own folder in its home.
const SERVER_DIR: &str = "antigravity-acp";
/// What follows `conversations/<session>` in the names of a session's files.
const SESSION_FILE_ENDINGS: [&str; 4] = [".db", ".db-wal", ".db-shm", ".meta"];
/// The longest session id used as a file name.
const MAX_ID_LEN: usize = 128;

/// The sessions one server process opened, and the file that records them.
#[derive(Debug)]
pub(crate) struct ConversationLedger {
    /// The server's home (`GEMINI_HOME`, else `~/.gemini`).
    home: PathBuf,
    path: PathBuf,
    /// Open and locked for the process's whole life.
    file: File,
    sessions: Vec<String>,
    /// A `session/new` was sent whose answer has not come (yet).
    pending: bool,
    /// A `session/new` ended without an id (refused, or the connection broke): the
    /// server may still have made the session's files, under an id nobody learnt.
    unknown: bool,
}

impl ConversationLedger {
    /// Starts the ledger of the server whose scratch folder is `scratch` and whose
    /// environment is `env`. `None` (logged) when the home is unknown or the ledger
    /// cannot be written: the sessions are then still removed at disposal, but a crash
    /// leaves them for nobody to sweep.
    pub(crate) fn start(scratch: &Path, env: &[(OsString, OsString)]) -> Option<Self> {
        let home = server_home(env)?;
        let path = ledger_path(scratch)?;
        match Self::create(&path, &home) {
            Ok(file) => Some(Self {
                home,
                path,
                file,
                sessions: Vec::new(),
                pending: false,
                unknown: false,
            }),
            Err(error) => {
                tracing::warn!(kind = ?error.kind(), "could not start a session ledger");
                None
            }
        }
    }

    fn create(path: &Path, home: &Path) -> std::io::Result<File> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        file.lock()?;
        // Each line in one write, so a crash never leaves half a line.
        file.write_all(format!("home {}\n", home.display()).as_bytes())?;
        file.flush()?;
        Ok(file)
    }

    /// A `session/new` is about to be sent.
    pub(crate) fn opening(&mut self) {
        self.pending = true;
    }

    /// The server answered `session/new` (with `Some(id)`) or refused it (`None`).
    pub(crate) fn opened(&mut self, session: Option<&str>) {
        self.pending = false;
        let Some(id) = session else {
            self.unknown = true;
            return;
        };
        if !is_safe_id(id) {
            tracing::warn!("a session id the server sent cannot name a file; not recorded");
            return;
        }
        let line = format!("session {id}\n");
        if let Err(error) = self
            .file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
        {
            tracing::warn!(kind = ?error.kind(), "could not record a session in its ledger");
        }
        self.sessions.push(id.to_owned());
    }

    /// The process is done: removes every recorded session's files, then the ledger
    /// (its lock goes with the handle). When a `session/new` ended without an id, the
    /// sessions whose `.meta` names a `cwd` inside `scratch` go too.
    pub(crate) fn remove_all(self, scratch: &Path) {
        for id in &self.sessions {
            remove_session(&self.home, id);
        }
        if self.pending || self.unknown {
            for id in sessions_in(&self.home, scratch) {
                remove_session(&self.home, &id);
            }
        }
        remove_quietly(&self.path);
    }
}

/// `<scratch root>/antigravity-acp-XXXXXX.sessions` for `<scratch root>/antigravity-acp-XXXXXX`.
fn ledger_path(scratch: &Path) -> Option<PathBuf> {
    let mut name = scratch.file_name()?.to_os_string();
    name.push(LEDGER_SUFFIX);
    Some(scratch.with_file_name(name))
}

/// Only ids that are plain names (a UUID is) name files.
fn is_safe_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Removes one session's files and its `brain/` folder.
fn remove_session(home: &Path, id: &str) {
    let dir = home.join(SERVER_DIR);
    for ending in SESSION_FILE_ENDINGS {
        remove_quietly(&dir.join("conversations").join(format!("{id}{ending}")));
    }
    let brain = dir.join("brain").join(id);
    match std::fs::remove_dir_all(&brain) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => {
            tracing::warn!(kind = ?error.kind(), "could not remove a session's brain folder")
        }
    }
}

fn remove_quietly(path: &Path) {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => tracing::warn!(kind = ?error.kind(), "could not remove a session file"),
    }
}

/// The sessions in `home` whose `.meta` gives a `cwd` inside `scratch` (a session the
/// server made for a `session/new` whose answer never came).
fn sessions_in(home: &Path, scratch: &Path) -> Vec<String> {
    let dir = home.join(SERVER_DIR).join("conversations");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let id = name.strip_suffix(".meta")?;
            let meta = std::fs::read(entry.path()).ok()?;
            let meta: serde_json::Value = serde_json::from_slice(&meta).ok()?;
            let cwd = Path::new(meta.get("cwd")?.as_str()?);
            (is_safe_id(id) && cwd.starts_with(scratch)).then(|| id.to_owned())
        })
        .collect()
}

/// Removes what crashed DSH processes left in `scratch_root`: for every ledger whose lock
/// can be taken (its owner is gone), its sessions' files, its scratch folder and the
/// ledger. A ledger still locked belongs to a live process and is left as it is; so is a
/// ledger with no complete `home` line (its owner may be between making and locking it).
/// Returns what it removed, counted as [`leftovers`] counts (one pass: a count before the
/// sweep would lock each dead ledger once more, and a child forked by another thread in
/// that instant would hold the lock until it execs, making the sweep skip it).
pub(crate) fn sweep(scratch_root: &Path) -> Leftovers {
    let mut swept = Leftovers::default();
    for_each_dead_ledger(scratch_root, |dead| {
        swept.ledgers += 1;
        swept.sessions += dead.sessions.len();
        for id in &dead.sessions {
            remove_session(&dead.home, id);
        }
        for id in sessions_in(&dead.home, dead.scratch) {
            remove_session(&dead.home, &id);
        }
        if dead.scratch.is_dir()
            && let Err(error) = std::fs::remove_dir_all(dead.scratch)
        {
            tracing::warn!(kind = ?error.kind(), "could not remove a crashed server's scratch folder");
        }
        remove_quietly(dead.ledger);
        tracing::info!(
            sessions = dead.sessions.len(),
            "swept a crashed process's sessions"
        );
    });
    swept
}

/// What the next [`sweep`] of a scratch root would remove, counted (nothing is changed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Leftovers {
    /// The ledgers of processes that are gone.
    pub(crate) ledgers: usize,
    /// The sessions those ledgers record.
    pub(crate) sessions: usize,
}

/// Counts what processes that are gone left in `scratch_root`: the ledgers [`sweep`] would
/// remove and the sessions they record. Reads only; a live owner's ledger is not counted.
pub(crate) fn leftovers(scratch_root: &Path) -> Leftovers {
    let mut found = Leftovers::default();
    for_each_dead_ledger(scratch_root, |dead| {
        found.ledgers += 1;
        found.sessions += dead.sessions.len();
    });
    found
}

/// A ledger whose owner is gone, while its lock is held.
struct DeadLedger<'a> {
    ledger: &'a Path,
    scratch: &'a Path,
    home: PathBuf,
    sessions: Vec<String>,
}

/// Calls `visit` for every ledger in `scratch_root` whose lock can be taken and whose
/// `home` line is complete, holding its lock meanwhile.
fn for_each_dead_ledger(scratch_root: &Path, mut visit: impl FnMut(DeadLedger<'_>)) {
    let Ok(entries) = std::fs::read_dir(scratch_root) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(folder) = name.strip_suffix(LEDGER_SUFFIX) else {
            continue;
        };
        if !folder.starts_with(SCRATCH_PREFIX) || !entry.path().is_file() {
            continue;
        }
        let ledger = entry.path();
        let Ok(mut file) = OpenOptions::new().read(true).write(true).open(&ledger) else {
            continue;
        };
        if file.try_lock().is_err() {
            continue;
        }
        let mut text = String::new();
        if file.read_to_string(&mut text).is_err() {
            continue;
        }
        let Some((home, sessions)) = parse_ledger(&text) else {
            continue;
        };
        let scratch = scratch_root.join(folder);
        visit(DeadLedger {
            ledger: &ledger,
            scratch: &scratch,
            home,
            sessions,
        });
        // The lock goes with the handle, after the visit.
        drop(file);
    }
}

/// The home and the session ids of a ledger whose `home` line is complete.
fn parse_ledger(text: &str) -> Option<(PathBuf, Vec<String>)> {
    let (first, rest) = text.split_once('\n')?;
    let home = PathBuf::from(first.strip_prefix("home ")?);
    if !home.is_absolute() {
        return None;
    }
    let sessions = rest
        .lines()
        .filter_map(|line| line.strip_prefix("session "))
        .filter(|id| is_safe_id(id))
        .map(str::to_owned)
        .collect();
    Some((home, sessions))
}

#[cfg(test)]
mod tests;
