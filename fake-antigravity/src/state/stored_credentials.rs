//! What the real server writes about the sign-in under `<home>/antigravity-acp/`
//! (docs/antigravity-1.3.0.md §5): a successful `authenticate` sets `auth.type` in
//! `settings.json` to the method (every other key kept), and `logout` (or `/logout`)
//! deletes the token `acp_token.json` and removes `auth.type`. Reading the sign-in state is
//! `gemini_home.rs`'s; journaling the writes is the caller's.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Why `settings.json` could not be updated.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// Reading, writing or removing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a JSON object: left as it is rather than overwritten.
    #[error("{path}: not a JSON object, left untouched")]
    NotAnObject {
        /// The file.
        path: PathBuf,
    },
}

/// The sign-in files of one home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCredentials {
    /// `<home>/antigravity-acp`.
    state_dir: PathBuf,
}

impl StoredCredentials {
    /// The sign-in files under `home` (a `GEMINI_HOME`).
    pub fn new(home: &Path) -> Self {
        Self {
            state_dir: home.join("antigravity-acp"),
        }
    }

    /// `settings.json`.
    pub fn settings_path(&self) -> PathBuf {
        self.state_dir.join("settings.json")
    }

    /// `acp_token.json`.
    pub fn token_path(&self) -> PathBuf {
        self.state_dir.join("acp_token.json")
    }

    /// Sets `auth.type` to `method`, keeping every other key (the file and its folder are
    /// made if missing).
    pub fn write_auth_type(&self, method: &str) -> Result<(), SettingsError> {
        let mut settings = self.read_settings()?.unwrap_or_default();
        let auth = settings
            .entry("auth")
            .or_insert_with(|| Value::Object(Map::new()));
        if !auth.is_object() {
            *auth = Value::Object(Map::new());
        }
        if let Some(auth) = auth.as_object_mut() {
            auth.insert("type".to_owned(), Value::String(method.to_owned()));
        }
        self.write_settings(&settings)
    }

    /// Deletes the token (if any) and removes `auth.type` from the settings (an `auth`
    /// left empty goes too). `Ok(true)` when `settings.json` was written, `Ok(false)` when
    /// it had no `auth.type` to remove (then it is not touched).
    pub fn clear(&self) -> Result<bool, SettingsError> {
        let token = self.token_path();
        match std::fs::remove_file(&token) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(SettingsError::Io {
                    path: token,
                    source,
                });
            }
        }
        let Some(mut settings) = self.read_settings()? else {
            return Ok(false);
        };
        let Some(auth) = settings.get_mut("auth").and_then(Value::as_object_mut) else {
            return Ok(false);
        };
        if auth.remove("type").is_none() {
            return Ok(false);
        }
        if auth.is_empty() {
            settings.remove("auth");
        }
        self.write_settings(&settings)?;
        Ok(true)
    }

    /// The settings, `None` when the file does not exist.
    fn read_settings(&self) -> Result<Option<Map<String, Value>>, SettingsError> {
        let path = self.settings_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(SettingsError::Io { path, source }),
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(settings)) => Ok(Some(settings)),
            _ => Err(SettingsError::NotAnObject { path }),
        }
    }

    fn write_settings(&self, settings: &Map<String, Value>) -> Result<(), SettingsError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| SettingsError::Io { path, source }
        };
        std::fs::create_dir_all(&self.state_dir).map_err(io(&self.state_dir))?;
        let path = self.settings_path();
        let text = format!("{:#}\n", Value::Object(settings.clone()));
        std::fs::write(&path, text).map_err(io(&path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(path: &Path) -> anyhow::Result<Value> {
        Ok(serde_json::from_str(&std::fs::read_to_string(path)?)?)
    }

    #[test]
    fn authenticate_sets_auth_type_and_keeps_every_other_key() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let stored = StoredCredentials::new(home.path());
        stored.write_auth_type("gemini-api-key")?;
        assert_eq!(
            read(&stored.settings_path())?,
            json!({"auth": {"type": "gemini-api-key"}})
        );
        std::fs::write(
            stored.settings_path(),
            r#"{"telemetry":false,"auth":{"type":"gemini-api-key","extra":1},"gcp":{"project":"p"}}"#,
        )?;
        stored.write_auth_type("oauth-personal")?;
        assert_eq!(
            read(&stored.settings_path())?,
            json!({"telemetry": false, "auth": {"type": "oauth-personal", "extra": 1}, "gcp": {"project": "p"}})
        );
        Ok(())
    }

    #[test]
    fn clearing_deletes_the_token_and_removes_only_auth_type() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let stored = StoredCredentials::new(home.path());
        assert!(!stored.clear()?, "nothing to clear, nothing written");
        assert!(!stored.settings_path().exists());

        std::fs::create_dir_all(home.path().join("antigravity-acp"))?;
        std::fs::write(stored.token_path(), r#"{"access_token":"t"}"#)?;
        std::fs::write(
            stored.settings_path(),
            r#"{"telemetry":false,"auth":{"type":"oauth-personal"}}"#,
        )?;
        assert!(stored.clear()?);
        assert!(!stored.token_path().exists());
        assert_eq!(read(&stored.settings_path())?, json!({"telemetry": false}));

        std::fs::write(
            stored.settings_path(),
            r#"{"auth":{"type":"x","selected":"y"}}"#,
        )?;
        assert!(stored.clear()?);
        assert_eq!(
            read(&stored.settings_path())?,
            json!({"auth": {"selected": "y"}})
        );
        assert!(!stored.clear()?, "no auth.type left");
        Ok(())
    }

    #[test]
    fn a_settings_file_that_is_not_an_object_is_left_alone() -> anyhow::Result<()> {
        let home = tempfile::tempdir()?;
        let stored = StoredCredentials::new(home.path());
        std::fs::create_dir_all(home.path().join("antigravity-acp"))?;
        std::fs::write(stored.settings_path(), "[1, 2")?;
        assert!(matches!(
            stored.write_auth_type("oauth-personal"),
            Err(SettingsError::NotAnObject { .. })
        ));
        assert_eq!(std::fs::read_to_string(stored.settings_path())?, "[1, 2");
        Ok(())
    }
}
