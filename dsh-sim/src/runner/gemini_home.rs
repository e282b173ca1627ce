//! Makes the fresh `GEMINI_HOME` a scenario asks for: the sign-in files the real server
//! reads at start-up, `antigravity-acp/settings.json` (`auth.type`) and
//! `antigravity-acp/acp_token.json` (a dummy token with an `expiry_date`).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::scenario::{GeminiHomeSpec, HomeToken};

/// Writes the home under `workspace` and returns its path.
pub fn make_gemini_home(workspace: &Path, spec: &GeminiHomeSpec) -> Result<PathBuf, String> {
    let home = workspace.join("gemini-home");
    let dir = home.join("antigravity-acp");
    let fail = |e: std::io::Error| format!("cannot make the scenario's GEMINI_HOME: {e}");
    std::fs::create_dir_all(&dir).map_err(fail)?;
    if let Some(auth_type) = &spec.auth_type {
        let settings = json!({"auth": {"type": auth_type}});
        std::fs::write(dir.join("settings.json"), settings.to_string()).map_err(fail)?;
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    let hour = Duration::from_secs(3600);
    let expiry = match spec.token {
        HomeToken::Absent => None,
        HomeToken::Valid => Some(now + hour),
        HomeToken::Expired => Some(now.saturating_sub(hour)),
    };
    if let Some(expiry) = expiry {
        let token = json!({"access_token": "dummy", "token_type": "Bearer",
                           "expiry_date": u64::try_from(expiry.as_millis()).unwrap_or(u64::MAX)});
        std::fs::write(dir.join("acp_token.json"), token.to_string()).map_err(fail)?;
    }
    Ok(home)
}
