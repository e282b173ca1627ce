//! The server's home (`GEMINI_HOME`, else `~/.gemini`), where Google's server keeps its
//! credentials, its settings and its conversations: where it is for a given launch
//! environment, and the one thing the adapter reads there, the sign-in method the
//! server's `settings.json` names (`auth.type`), so that the adapter never switches a
//! method the user set up (issue 25 §2). The adapter writes nothing here.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config::AuthMethod;

/// Where the server keeps its files: `GEMINI_HOME`, else `~/.gemini` (`HOME`, or on
/// Windows `USERPROFILE`), from the environment the server was given; absolute.
pub(crate) fn server_home(env: &[(OsString, OsString)]) -> Option<PathBuf> {
    let var = |name: &str| {
        env.iter()
            .rev()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| PathBuf::from(v))
    };
    let home = var("GEMINI_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".gemini")))
        .or_else(|| var("USERPROFILE").map(|h| h.join(".gemini")))?;
    std::path::absolute(home).ok()
}

/// What the server's `settings.json` says about the sign-in method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SettledMethod {
    /// No `auth.type` (or no readable settings): nothing is set up yet.
    None,
    /// One of the four methods.
    Known(AuthMethod),
    /// A value the adapter does not know (never quoted back).
    Other,
}

/// The method `<home>/antigravity-acp/settings.json` names in `auth.type`.
pub(crate) fn settled_method(home: &Path) -> SettledMethod {
    let path = home.join("antigravity-acp").join("settings.json");
    let Ok(text) = std::fs::read(&path) else {
        return SettledMethod::None;
    };
    let Ok(settings) = serde_json::from_slice::<serde_json::Value>(&text) else {
        return SettledMethod::None;
    };
    match settings
        .pointer("/auth/type")
        .and_then(serde_json::Value::as_str)
    {
        None => SettledMethod::None,
        Some(id) => AuthMethod::from_id(id).map_or(SettledMethod::Other, SettledMethod::Known),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_is_gemini_home_else_dot_gemini() {
        let env = |pairs: &[(&str, &str)]| -> Vec<(OsString, OsString)> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect()
        };
        let root = if cfg!(windows) { "C:\\" } else { "/" };
        let g = format!("{root}g");
        let h = format!("{root}h");
        assert_eq!(
            server_home(&env(&[("GEMINI_HOME", &g), ("HOME", &h)])),
            Some(PathBuf::from(&g))
        );
        assert_eq!(
            server_home(&env(&[("GEMINI_HOME", ""), ("HOME", &h)])),
            Some(Path::new(&h).join(".gemini"))
        );
        assert_eq!(
            server_home(&env(&[("USERPROFILE", &h)])),
            Some(Path::new(&h).join(".gemini"))
        );
        assert_eq!(server_home(&env(&[])), None);
    }

    #[test]
    fn the_settled_method_is_read_from_auth_type() -> crate::TestResult {
        let home = tempfile::tempdir()?;
        assert_eq!(settled_method(home.path()), SettledMethod::None);
        let dir = home.path().join("antigravity-acp");
        std::fs::create_dir_all(&dir)?;
        for (json, expected) in [
            (
                r#"{"auth":{"type":"gemini-api-key"}}"#,
                SettledMethod::Known(AuthMethod::GeminiApiKey),
            ),
            (
                r#"{"auth":{"type":"vertex-ai"}}"#,
                SettledMethod::Known(AuthMethod::AgentPlatform),
            ),
            (r#"{"auth":{"type":"something"}}"#, SettledMethod::Other),
            (r#"{"telemetry":true}"#, SettledMethod::None),
            ("not json", SettledMethod::None),
        ] {
            std::fs::write(dir.join("settings.json"), json)?;
            assert_eq!(settled_method(home.path()), expected, "{json}");
        }
        Ok(())
    }
}
