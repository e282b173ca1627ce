//! The sign-in state the real server finds in `$GEMINI_HOME` at start-up (docs/antigravity-1.3.0.md §2,
//! §5): `antigravity-acp/settings.json` with `auth.type`, and the token file
//! `antigravity-acp/acp_token.json` (its `expiry_date`, epoch milliseconds, if any).

use std::path::Path;

use serde_json::Value;

/// What the home says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HomeSignIn {
    /// `auth.type` set and a token that has not expired.
    SignedIn,
    /// No `auth.type`, or no token.
    SignedOut,
    /// `auth.type` set, but the token's `expiry_date` has passed.
    Expired,
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Reads the sign-in state of `home`.
pub fn home_sign_in(home: &Path) -> HomeSignIn {
    let dir = home.join("antigravity-acp");
    let auth_type = read_json(&dir.join("settings.json")).and_then(|settings| {
        settings
            .pointer("/auth/type")
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    let token = read_json(&dir.join("acp_token.json"));
    match (auth_type, token) {
        (Some(_), Some(token)) => {
            let now_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis());
            match token.get("expiry_date").and_then(Value::as_u64) {
                Some(expiry) if u128::from(expiry) <= now_ms => HomeSignIn::Expired,
                _ => HomeSignIn::SignedIn,
            }
        }
        _ => HomeSignIn::SignedOut,
    }
}
