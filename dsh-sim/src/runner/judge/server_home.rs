//! B08 judged against a server the runner did not script (`--server CMD`, the nightly's
//! real 1.3.0): the runner cannot plant into that server's home or know which sessions
//! were the scenario's, so it compares names. Before the run it lists what the server's
//! home holds under `antigravity-acp/conversations/` and `antigravity-acp/brain/`; after
//! disposal anything new there is a conversation of the scenario that outlived its turn.
//! Judged for scenarios that cover B08 only, so that a user's other clients writing into
//! the same home during an unrelated run never fail it.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use antigravity_acp::AdapterConfig;

use crate::scenario::Scenario;

/// The folders of the server's home whose entries are one session's each.
const SESSION_FOLDERS: [&str; 2] = ["conversations", "brain"];

/// What the server's home held before the run.
#[derive(Debug)]
pub struct ServerHomeCheck {
    home: PathBuf,
    before: BTreeSet<PathBuf>,
}

/// The server's home as the adapter's server sees it: `GEMINI_HOME`, else `~/.gemini`
/// (`HOME`, or `USERPROFILE` on Windows), read from `env`.
pub fn server_home(env: &[(OsString, OsString)]) -> Option<PathBuf> {
    let var = |name: &str| {
        env.iter()
            .rev()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| PathBuf::from(v))
    };
    var("GEMINI_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".gemini")))
        .or_else(|| var("USERPROFILE").map(|h| h.join(".gemini")))
}

fn entries(home: &Path) -> BTreeSet<PathBuf> {
    SESSION_FOLDERS
        .iter()
        .filter_map(|folder| std::fs::read_dir(home.join("antigravity-acp").join(folder)).ok())
        .flat_map(|dir| dir.filter_map(Result::ok).map(|entry| entry.path()))
        .collect()
}

impl ServerHomeCheck {
    /// Starts the check of a run against a server the runner did not script, when the
    /// scenario covers B08 (`None` otherwise).
    /// The server's environment is the adapter's `host_env`, else this process's.
    pub fn start(scenario: &Scenario, scripted: bool, config: &AdapterConfig) -> Option<Self> {
        let covers_b08 = scenario.covers.iter().any(|claim| claim.as_str() == "B08");
        if scripted || !covers_b08 {
            return None;
        }
        let env = (config.host_env.clone()).unwrap_or_else(|| std::env::vars_os().collect());
        let home = server_home(&env)?;
        let before = entries(&home);
        Some(Self { home, before })
    }

    /// What is new in the server's home since [`Self::start`], as failures.
    pub fn judge(&self) -> Vec<String> {
        let left: Vec<String> = entries(&self.home)
            .difference(&self.before)
            .map(|path| {
                let shown = path.strip_prefix(&self.home).unwrap_or(path);
                format!("$GEMINI_HOME/{}", crate::scenario::slash_path(shown))
            })
            .collect();
        if left.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "B08: the server's home holds conversation files that were not there before the \
             run (left after disposal): {left:?}"
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_is_new_in_the_session_folders_is_reported() -> Result<(), String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let home = dir.path().to_path_buf();
        let conversations = home.join("antigravity-acp").join("conversations");
        std::fs::create_dir_all(&conversations).map_err(|e| e.to_string())?;
        std::fs::write(conversations.join("old.db"), b"x").map_err(|e| e.to_string())?;
        let check = ServerHomeCheck {
            home: home.clone(),
            before: entries(&home),
        };
        assert!(check.judge().is_empty());
        std::fs::write(conversations.join("new.db"), b"x").map_err(|e| e.to_string())?;
        std::fs::write(home.join("antigravity-acp").join("settings.json"), b"{}")
            .map_err(|e| e.to_string())?;
        let failures = check.judge();
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].contains("conversations/new.db"), "{failures:?}");
        assert!(!failures[0].contains("old.db") && !failures[0].contains("settings"));
        Ok(())
    }

    #[test]
    fn the_home_is_gemini_home_else_dot_gemini() {
        let env = |pairs: &[(&str, &str)]| -> Vec<(OsString, OsString)> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect()
        };
        assert_eq!(
            server_home(&env(&[("GEMINI_HOME", "/g"), ("HOME", "/h")])),
            Some("/g".into())
        );
        assert_eq!(
            server_home(&env(&[("HOME", "/h")])),
            Some(Path::new("/h").join(".gemini"))
        );
        assert_eq!(server_home(&env(&[])), None);
    }
}
