//! The state one served connection shares between its handlers: the script, the model
//! catalogue, the sign-in state, the sessions, the journal, the stderr logger, and the
//! home it may write into (only a `GEMINI_HOME` set in its environment).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::journal::JournalEntry;
use crate::journal::writer::JournalWriter;
use crate::process::glog::Glog;
use crate::process::stdout_lines::StdoutLines;
use crate::script::{AuthScript, Script};
use crate::state::conversation_files::ConversationFiles;
use crate::state::gemini_home::{HomeSignIn, home_sign_in};
use crate::state::held_files::HeldConversationFiles;
use crate::state::session_config::ModelCatalogue;
use crate::state::sessions::SessionStore;
use crate::state::stored_credentials::StoredCredentials;

/// The fake server behind one ACP connection.
#[derive(Debug)]
pub struct FakeAgent {
    /// What the fake was told to do.
    pub script: Script,
    /// The models sessions may use.
    pub catalogue: ModelCatalogue,
    /// `$GEMINI_HOME` (default `$HOME/.gemini`), named in auth and not-found errors.
    pub gemini_home: PathBuf,
    /// The sessions.
    pub sessions: SessionStore,
    /// The journal, when one is written.
    pub journal: Option<Arc<JournalWriter>>,
    /// stderr diagnostics.
    pub log: Glog,
    /// Raw lines to print on stdout between frames (1.1.1's sign-in URL line).
    pub stdout_lines: StdoutLines,
    /// The home the fake writes into as the real server does (conversation files,
    /// `settings.json`, the token's removal): `gemini_home` when it came from
    /// `$GEMINI_HOME`, else none, so the fake never writes into a real `~/.gemini`.
    pub writable_home: Option<PathBuf>,
    /// The session files held open until the process exits (shared with the process,
    /// which looks at them once more as it exits).
    pub held_files: Arc<HeldConversationFiles>,
    signed_in: AtomicBool,
}

impl FakeAgent {
    /// A fresh server: signed in when the script says so, no sessions.
    pub fn new(
        script: Script,
        gemini_home: PathBuf,
        journal: Option<Arc<JournalWriter>>,
        log: Glog,
    ) -> Self {
        let catalogue = ModelCatalogue::from_script(&script);
        let signed_in = match script.auth {
            AuthScript::SignedIn => true,
            AuthScript::FromHome => {
                let state = home_sign_in(&gemini_home);
                log.info(
                    "settings.py:300",
                    &format!("sign-in state from GEMINI_HOME: {state:?}"),
                );
                state == HomeSignIn::SignedIn
            }
            AuthScript::Required | AuthScript::Refused | AuthScript::NeverSatisfied => false,
        };
        Self {
            script,
            catalogue,
            gemini_home,
            sessions: SessionStore::default(),
            journal,
            log,
            stdout_lines: StdoutLines::default(),
            writable_home: None,
            held_files: Arc::default(),
            signed_in: AtomicBool::new(signed_in),
        }
    }

    /// Whether sessions may open.
    pub fn is_signed_in(&self) -> bool {
        self.signed_in.load(Ordering::SeqCst)
    }

    /// Signs in (`authenticate` succeeded) or out (`logout`).
    pub fn set_signed_in(&self, signed_in: bool) {
        self.signed_in.store(signed_in, Ordering::SeqCst);
    }

    /// Where sessions' conversations are kept: none without a writable home or with
    /// `session_new.conversation_files: false`.
    pub fn conversation_files(&self) -> Option<ConversationFiles> {
        let home = self.writable_home.as_deref()?;
        self.script
            .session_new
            .conversation_files
            .then(|| ConversationFiles::new(home))
    }

    /// Journals every held session file that vanished since the fake last looked
    /// (`noticed_at`: what it was doing).
    pub fn look_at_held_files(&self, noticed_at: &str) {
        let home = self.writable_home.as_deref();
        for entry in vanished_entries(&self.held_files, home, noticed_at) {
            self.record(entry);
        }
    }

    /// The sign-in files the fake updates: none without a writable home.
    pub fn stored_credentials(&self) -> Option<StoredCredentials> {
        self.writable_home.as_deref().map(StoredCredentials::new)
    }

    /// Appends to the journal, if there is one.
    pub fn record(&self, entry: JournalEntry) {
        if let Some(journal) = &self.journal {
            journal.record(&entry);
        }
    }

    /// Journals a failed expectation and reports it on stderr.
    pub fn expectation_failed(&self, turn: usize, step: usize, message: String) {
        self.log.warning(
            "script.py:1",
            &format!("expectation failed at turns[{turn}].steps[{step}]: {message}"),
        );
        self.record(JournalEntry::ExpectationFailed {
            turn,
            step,
            message,
        });
    }
}

/// The journal entries for the files of `held` that vanished, named relative to `home`.
pub fn vanished_entries(
    held: &HeldConversationFiles,
    home: Option<&std::path::Path>,
    noticed_at: &str,
) -> Vec<JournalEntry> {
    held.vanished()
        .into_iter()
        .map(|gone| {
            let relative = home
                .and_then(|home| gone.path.strip_prefix(home).ok())
                .unwrap_or(&gone.path);
            let file = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            JournalEntry::ConversationFileVanished {
                session_id: gone.session_id,
                file,
                noticed_at: noticed_at.to_owned(),
            }
        })
        .collect()
}
