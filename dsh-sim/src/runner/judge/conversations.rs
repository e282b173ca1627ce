//! B08 judged from outside, after the adapter is disposed: no conversation of the
//! scenario's sessions is left on disk, crash leftovers were swept without touching a live
//! process's sessions, and no file the adapter did not create was touched. On for every
//! run against the fake (which writes 1.3.0's conversation files into the runner's fresh
//! `GEMINI_HOME`).
//!
//! Before the run [`ConversationWatch::prepare`] plants another client's conversation in
//! the home (`antigravity-acp/conversations/<id>.db`, `.db-wal`, `.db-shm`, `.meta` and
//! `antigravity-acp/brain/<id>/notes.md`, [`OTHER_CLIENT_SESSION`]) and the scenario's
//! `dsh.leftovers` ([`crate::runner::leftovers`]), then remembers the bytes of every file
//! in the home. After disposal [`ConversationWatch::judge`] finds:
//! - leftovers: any entry of `conversations/` or `brain/` that is not the other client's
//!   or a live owner's is a leftover of the scenario's sessions (unless the scenario says
//!   `leaves_conversations: "why"`), or of a dead owner the sweep missed;
//! - touched files: the other client's files, a live owner's ledger, scratch folder and
//!   session files, and the credentials (`settings.json`, `acp_token.json`) must be
//!   byte for byte as they were. The credentials are judged only when the scenario has no
//!   sign-in ([`signs_in`]): a server writes them when `authenticate` succeeds.
//!
//! [`vanished_while_running`] reads the fake's journal for a session file pulled from
//! under its live process.
//!
//! The scratch root's own leftovers (a dead owner's ledger and scratch folder, any ledger
//! of the scenario's processes) are the disposal leak check's (`leak.rs`), which is told
//! what live owners keep there ([`ConversationWatch::kept_in_scratch_root`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use fake_antigravity::journal::JournalEntry;
use fake_antigravity::script::AuthScript;

use crate::runner::leftovers::{self, PlantedOwner, session_paths, write_session};
use crate::scenario::{HomeToken, LedgerOwner, Scenario};

/// The session id of the other client's conversation planted in every home.
pub const OTHER_CLIENT_SESSION: &str = "0b08c11e-a7e5-4d0e-9c1a-0a11ce0fb08e";

/// The sign-in files of a home, under `antigravity-acp/`.
pub const CREDENTIAL_FILES: [&str; 2] = ["settings.json", "acp_token.json"];

/// What was planted for B08 and what the home held before the run.
#[derive(Debug)]
pub struct ConversationWatch {
    /// The scenario's `GEMINI_HOME`.
    home: PathBuf,
    /// The scratch root (to name a ledger in a message).
    scratch_root: PathBuf,
    /// Every file that must be unchanged after the run, with its bytes.
    before: BTreeMap<PathBuf, Vec<u8>>,
    /// The sessions whose files may remain: the other client's and live owners'.
    kept_sessions: BTreeSet<String>,
    /// The sessions of dead owners, which the sweep must remove.
    dead_sessions: BTreeSet<String>,
    /// The planted ledgers (a live one's lock is held while this lives).
    owners: Vec<PlantedOwner>,
    /// Whether the credentials are judged (the scenario has no sign-in).
    credentials_judged: bool,
    /// The scenario's `leaves_conversations`.
    exempt: Option<String>,
}

/// Whether the scenario's server may sign in, and so write the credentials: it does not
/// start signed in (`fake.auth` other than `signed-in`, or `from-home` with a home that
/// is not signed in).
pub fn signs_in(scenario: &Scenario) -> bool {
    let home_signed_in = scenario
        .dsh
        .gemini_home
        .as_ref()
        .is_some_and(|home| home.auth_type.is_some() && home.token == HomeToken::Valid);
    match scenario.fake.auth {
        AuthScript::SignedIn => false,
        AuthScript::FromHome => !home_signed_in,
        AuthScript::Required | AuthScript::Refused | AuthScript::NeverSatisfied => true,
    }
}

/// The watch of a run whose `GEMINI_HOME` the runner made against the fake (`home`;
/// `None`: no judge, and no `dsh.leftovers` either).
pub fn watch(
    scenario: &Scenario,
    home: Option<&Path>,
    scratch_root: &Path,
) -> Result<Option<ConversationWatch>, String> {
    match home {
        Some(home) => ConversationWatch::prepare(scenario, home, scratch_root).map(Some),
        None if scenario.dsh.leftovers.is_empty() => Ok(None),
        None => Err("`dsh.leftovers` is planted only against the fake".to_owned()),
    }
}

/// What live planted owners keep in the scratch root (none without a watch).
pub fn kept_in_scratch_root(watch: Option<&ConversationWatch>) -> Vec<String> {
    watch.map_or_else(Vec::new, ConversationWatch::kept_in_scratch_root)
}

/// The B08 failures the fake's journal shows: a session file it held open, as SQLite
/// does, whose path stopped naming it while the process ran (`conversation_file_vanished`,
/// under `session_new.hold_conversation_files`): the adapter pulled a live server's files
/// from under it.
pub fn vanished_while_running(journal: &[Vec<JournalEntry>]) -> Vec<String> {
    journal
        .iter()
        .enumerate()
        .flat_map(|(process, entries)| {
            entries.iter().filter_map(move |entry| match entry {
                JournalEntry::ConversationFileVanished {
                    session_id,
                    file,
                    noticed_at,
                } => Some(format!(
                    "B08: {file} (session {session_id}) vanished while server process \
                     {process} still ran and held it open (noticed at {noticed_at})"
                )),
                _ => None,
            })
        })
        .collect()
}

/// The B08 failures after disposal (none without a watch).
pub fn judge(watch: Option<&ConversationWatch>) -> Vec<String> {
    watch.map_or_else(Vec::new, ConversationWatch::judge)
}

impl ConversationWatch {
    /// Plants the other client's conversation and the scenario's leftovers under `home`
    /// and `scratch_root`, and remembers the home's files.
    pub fn prepare(scenario: &Scenario, home: &Path, scratch_root: &Path) -> Result<Self, String> {
        write_session(
            home,
            OTHER_CLIENT_SESSION,
            "another client's conversation",
            "notes.md",
        )?;
        let owners = leftovers::plant(&scenario.dsh.leftovers, home, scratch_root)?;
        let sessions_of = |owner: LedgerOwner| -> BTreeSet<String> {
            owners
                .iter()
                .filter(|o| o.owner == owner)
                .flat_map(|o| o.sessions.iter().cloned())
                .collect()
        };
        let dead_sessions = sessions_of(LedgerOwner::Dead);
        let mut kept_sessions = sessions_of(LedgerOwner::Live);
        kept_sessions.insert(OTHER_CLIENT_SESSION.to_owned());
        let credentials_judged = !signs_in(scenario);
        let state = home.join("antigravity-acp");
        let dead_paths: Vec<PathBuf> = dead_sessions
            .iter()
            .flat_map(|id| session_paths(home, id))
            .collect();
        let mut before = BTreeMap::new();
        for file in files_under(home) {
            let credential = CREDENTIAL_FILES.iter().any(|name| file == state.join(name));
            if dead_paths.iter().any(|dead| file.starts_with(dead))
                || (credential && !credentials_judged)
            {
                continue;
            }
            let bytes = std::fs::read(&file)
                .map_err(|e| format!("cannot read {} before the run: {e}", file.display()))?;
            before.insert(file, bytes);
        }
        for live in owners.iter().filter(|o| o.owner == LedgerOwner::Live) {
            for file in std::iter::once(live.ledger.clone()).chain(files_under(&live.scratch)) {
                let bytes = std::fs::read(&file)
                    .map_err(|e| format!("cannot read {} before the run: {e}", file.display()))?;
                before.insert(file, bytes);
            }
        }
        Ok(Self {
            home: home.to_owned(),
            scratch_root: scratch_root.to_owned(),
            before,
            kept_sessions,
            dead_sessions,
            owners,
            credentials_judged,
            exempt: scenario.leaves_conversations.clone(),
        })
    }

    /// The names a live owner keeps in the scratch root (its ledger and scratch folder),
    /// which the disposal leak check must not count.
    pub fn kept_in_scratch_root(&self) -> Vec<String> {
        self.owners
            .iter()
            .filter(|o| o.owner == LedgerOwner::Live)
            .flat_map(|o| [&o.ledger, &o.scratch])
            .filter_map(|path| path.file_name())
            .map(|name| name.to_string_lossy().into_owned())
            .collect()
    }

    /// Whether the credentials were remembered to be judged.
    pub fn judges_credentials(&self) -> bool {
        self.credentials_judged
    }

    /// Every B08 failure found now (call it once the adapter is disposed).
    pub fn judge(&self) -> Vec<String> {
        let mut failures = Vec::new();
        let (mut removed, mut changed) = (Vec::new(), Vec::new());
        for (path, bytes) in &self.before {
            match std::fs::read(path) {
                Ok(now) if now == *bytes => {}
                Ok(_) => changed.push(self.show(path)),
                Err(_) => removed.push(self.show(path)),
            }
        }
        for (what, paths) in [("removed", removed), ("changed", changed)] {
            if !paths.is_empty() {
                failures.push(format!(
                    "B08: files the adapter did not create (another client's conversation, \
                     a live DSH's session or ledger, the credentials) were {what}: {paths:?}"
                ));
            }
        }
        let (mut dead, mut own) = (Vec::new(), Vec::new());
        for (path, session) in self.entries_left() {
            if self.kept_sessions.contains(&session) {
                // A file added inside a kept session's brain folder.
                if path.is_file() && !self.before.contains_key(&path) {
                    changed_kept(&mut failures, &self.show(&path));
                }
                continue;
            }
            let shown = self.show(&path);
            if self.dead_sessions.contains(&session) {
                dead.push(shown);
            } else {
                own.push(shown);
            }
        }
        dead.sort();
        own.sort();
        if !dead.is_empty() {
            failures.push(format!(
                "B08: the sweep left a dead DSH's session files (its ledger was unlocked): \
                 {dead:?}"
            ));
        }
        match (&self.exempt, own.is_empty()) {
            (_, true) | (Some(_), false) => {}
            (None, false) => failures.push(format!(
                "B08: conversation files of the scenario's sessions outlived the run (left \
                 after disposal): {own:?}"
            )),
        }
        failures
    }

    /// Every entry of `conversations/` and `brain/` (and every file inside a kept
    /// session's brain folder) with the session it belongs to.
    fn entries_left(&self) -> Vec<(PathBuf, String)> {
        let state = self.home.join("antigravity-acp");
        let mut left = Vec::new();
        for (folder, in_brain) in [("conversations", false), ("brain", true)] {
            let Ok(entries) = std::fs::read_dir(state.join(folder)) else {
                continue;
            };
            for entry in entries.filter_map(Result::ok) {
                let name = entry.file_name().to_string_lossy().into_owned();
                let session = match in_brain {
                    true => name.clone(),
                    false => name.split('.').next().unwrap_or_default().to_owned(),
                };
                let path = entry.path();
                if in_brain && self.kept_sessions.contains(&session) {
                    left.extend(files_under(&path).into_iter().map(|f| (f, session.clone())));
                } else {
                    left.push((path, session));
                }
            }
        }
        left
    }

    /// A path as a message names it: under `$GEMINI_HOME` or the scratch root.
    fn show(&self, path: &Path) -> String {
        if let Ok(rest) = path.strip_prefix(&self.home) {
            return format!("$GEMINI_HOME/{}", rest.display()).replace('\\', "/");
        }
        if let Ok(rest) = path.strip_prefix(&self.scratch_root) {
            return format!("<scratch root>/{}", rest.display()).replace('\\', "/");
        }
        path.display().to_string()
    }
}

/// A file added inside the other client's (or a live DSH's) brain folder.
fn changed_kept(failures: &mut Vec<String>, shown: &str) {
    failures.push(format!(
        "B08: a file appeared in a conversation that is not DSH's (another client's or a \
         live DSH's): {shown}"
    ));
}

/// Every file under `dir`, recursively (none when it cannot be read).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_owned()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => folders.push(entry.path()),
                Ok(_) => files.push(entry.path()),
                Err(_) => {}
            }
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests;
