//! Plants what other DSH processes of the same scratch root leave behind
//! (`dsh.leftovers`, B08), before the provider starts: for each planted ledger a scratch
//! folder `antigravity-acp-XXXXXX/` (with one file in it) and its ledger
//! `antigravity-acp-XXXXXX.sessions` in the scratch root, in the B08 contract's format
//! (`home <GEMINI_HOME>`, then `session <id>` per session), and each listed session's
//! conversation files in the `GEMINI_HOME`: `antigravity-acp/conversations/<id>.db`,
//! `.db-wal`, `.db-shm`, `.meta` and `antigravity-acp/brain/<id>/`. A live owner's
//! ledger is locked (an OS advisory lock, `File::try_lock`: flock on Unix, LockFileEx on
//! Windows) and the lock held as long as the [`PlantedOwner`] lives, as a live DSH process
//! holds its own; a dead owner's is not locked, as the kernel released a crashed one's.
//! Judging what became of them is `conversations.rs`'s.

use std::fs::File;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::scenario::{LedgerOwner, PlantedLedger};

/// The name every scratch folder and ledger of the adapter starts with.
pub const SCRATCH_PREFIX: &str = "antigravity-acp-";

/// The suffix of a ledger's file name.
pub const LEDGER_SUFFIX: &str = ".sessions";

/// What the runner planted for one ledger.
#[derive(Debug)]
pub struct PlantedOwner {
    /// Dead or live.
    pub owner: LedgerOwner,
    /// The ledger file.
    pub ledger: PathBuf,
    /// Its scratch folder.
    pub scratch: PathBuf,
    /// The session ids it lists.
    pub sessions: Vec<String>,
    /// The ledger's open handle holding its lock (a live owner only).
    lock: Option<File>,
}

impl PlantedOwner {
    /// Whether the runner holds the ledger's lock.
    pub fn holds_lock(&self) -> bool {
        self.lock.is_some()
    }
}

/// The conversation files of session `id` under `home` (a `GEMINI_HOME`): the four
/// files in `conversations/`, then the `brain/` folder.
pub fn session_paths(home: &Path, id: &str) -> [PathBuf; 5] {
    let state = home.join("antigravity-acp");
    let conversation = |suffix: &str| state.join("conversations").join(format!("{id}{suffix}"));
    [
        conversation(".db"),
        conversation(".db-wal"),
        conversation(".db-shm"),
        conversation(".meta"),
        state.join("brain").join(id),
    ]
}

/// Writes session `id`'s conversation files under `home`, each with bytes naming `whose`
/// (the brain folder holds `file_in_brain`).
pub fn write_session(
    home: &Path,
    id: &str,
    whose: &str,
    file_in_brain: &str,
) -> Result<(), String> {
    let [db, wal, shm, meta, brain] = session_paths(home, id);
    let fail = |e: std::io::Error| format!("cannot plant the conversation files of {whose}: {e}");
    std::fs::create_dir_all(&brain).map_err(fail)?;
    if let Some(folder) = db.parent() {
        std::fs::create_dir_all(folder).map_err(fail)?;
    }
    let mut database = b"SQLite format 3\0".to_vec();
    database.extend_from_slice(format!("{whose}: session {id}\n").as_bytes());
    std::fs::write(&db, database).map_err(fail)?;
    std::fs::write(&wal, format!("{whose}: the history of {id}\n")).map_err(fail)?;
    std::fs::write(&shm, format!("{whose}: shared memory of {id}\n")).map_err(fail)?;
    let cwd = format!("/{whose}/cwd/{id}").replace(' ', "-");
    std::fs::write(&meta, serde_json::json!({ "cwd": cwd }).to_string()).map_err(fail)?;
    std::fs::write(
        brain.join(file_in_brain),
        format!("# {whose}\n\nthe artifacts of session {id}\n"),
    )
    .map_err(fail)
}

/// Plants every ledger of `specs` in `scratch_root`, with its sessions' files under
/// `home`, and locks the live ones.
pub fn plant(
    specs: &[PlantedLedger],
    home: &Path,
    scratch_root: &Path,
) -> Result<Vec<PlantedOwner>, String> {
    let fail = |e: std::io::Error| format!("cannot plant a session ledger: {e}");
    let mut planted = Vec::new();
    for (index, spec) in specs.iter().enumerate() {
        let whose = match spec.owner {
            LedgerOwner::Dead => "a dead DSH's leftover",
            LedgerOwner::Live => "a live DSH's session",
        };
        let scratch = tempfile::Builder::new()
            .prefix(SCRATCH_PREFIX)
            .tempdir_in(scratch_root)
            .map_err(fail)?
            .keep();
        std::fs::write(
            scratch.join("server-scratch.txt"),
            format!("{whose}: a server's scratch\n"),
        )
        .map_err(fail)?;
        let name = scratch
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let ledger = scratch_root.join(format!("{name}{LEDGER_SUFFIX}"));
        let sessions: Vec<String> = (0..spec.sessions)
            .map(|n| session_id(&format!("{name}/{index}/{n}")))
            .collect();
        let mut text = format!("home {}\n", home.display());
        for id in &sessions {
            text.push_str(&format!("session {id}\n"));
            write_session(home, id, whose, "task.md")?;
        }
        std::fs::write(&ledger, text).map_err(fail)?;
        let lock = match spec.owner {
            LedgerOwner::Dead => None,
            LedgerOwner::Live => Some(lock(&ledger)?),
        };
        planted.push(PlantedOwner {
            owner: spec.owner,
            ledger,
            scratch,
            sessions,
            lock,
        });
    }
    Ok(planted)
}

/// Opens `ledger` and takes its advisory lock, which the handle keeps.
fn lock(ledger: &Path) -> Result<File, String> {
    let file = File::options()
        .read(true)
        .write(true)
        .open(ledger)
        .map_err(|e| format!("cannot open the planted ledger {}: {e}", ledger.display()))?;
    file.try_lock().map_err(|e| {
        format!(
            "cannot lock the planted ledger {} as a live DSH would: {e}",
            ledger.display()
        )
    })?;
    Ok(file)
}

/// A UUID-shaped session id, as 1.3.0 makes them, unique to `seed` and this moment.
pub fn session_id(seed: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let digest = Sha256::digest(format!("{seed}/{}/{nanos}", std::process::id()));
    let hex = hex::encode(&digest[..16]);
    format!(
        "{}-{}-4{}-8{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_uuid_shaped_file_names() {
        let id = session_id("x");
        assert_eq!(id.len(), 36);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-'));
        assert_ne!(id, session_id("y"));
    }

    #[test]
    fn a_ledger_names_its_home_and_sessions_and_a_live_one_is_locked()
    -> Result<(), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        let (home, scratch_root) = (root.path().join("home"), root.path().join("scratch"));
        std::fs::create_dir_all(&scratch_root)?;
        let specs = [
            PlantedLedger {
                owner: LedgerOwner::Dead,
                sessions: 2,
            },
            PlantedLedger {
                owner: LedgerOwner::Live,
                sessions: 1,
            },
        ];
        let planted = plant(&specs, &home, &scratch_root)?;
        let dead = &planted[0];
        let text = std::fs::read_to_string(&dead.ledger)?;
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some(format!("home {}", home.display()).as_str())
        );
        let listed: Vec<&str> = lines.filter_map(|l| l.strip_prefix("session ")).collect();
        assert_eq!(
            listed,
            dead.sessions.iter().map(String::as_str).collect::<Vec<_>>()
        );
        assert!(dead.ledger.starts_with(&scratch_root) && dead.scratch.is_dir());
        for path in dead.sessions.iter().flat_map(|id| session_paths(&home, id)) {
            assert!(path.exists(), "{}", path.display());
        }
        let other = File::open(&dead.ledger)?;
        other.try_lock()?;
        let live = &planted[1];
        assert!(live.holds_lock() && !dead.holds_lock());
        assert!(
            File::open(&live.ledger)?.try_lock().is_err(),
            "the live lock is held"
        );
        Ok(())
    }
}
