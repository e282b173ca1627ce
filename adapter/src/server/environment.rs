//! The server's environment: an allowlist, never DSH's whole environment. Google's
//! server has a shell tool of its own, so DSH's other secrets (other providers' keys,
//! tokens) must not reach it. What passes: the basics a process needs (paths, user,
//! locale, time zone, temp dirs, XDG dirs), the documented Gemini/Antigravity variables
//! (its own credentials and state), the standard proxy and CA variables, then the
//! server's own variables (registry `env`, `ANTIGRAVITY_HARNESS_PATH`) and the
//! configured extras.

use std::ffi::{OsStr, OsString};

/// Variables passed through by exact name.
pub const ALLOWED_VARIABLES: &[&str] = &[
    // What any process needs.
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    // The browser sign-in flow.
    "BROWSER",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    // The server's own state and credentials (documented Gemini/Antigravity variables).
    "GEMINI_HOME",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CLOUDSDK_CONFIG",
    "AGY_ACP_FORCE_FILE_STORAGE",
    "ANTIGRAVITY_HARNESS_PATH",
    "PYTHONUNBUFFERED",
    // Networks behind company proxies.
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    // Windows basics.
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "USERPROFILE",
    "USERNAME",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "COMSPEC",
    "PATHEXT",
];

/// Variables passed through by prefix.
pub const ALLOWED_PREFIXES: &[&str] = &["LC_", "XDG_"];

/// Whether the host variable `name` may reach the server.
pub fn is_allowed(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    let matches = |allowed: &str| {
        if cfg!(windows) {
            allowed.eq_ignore_ascii_case(name)
        } else {
            allowed == name
        }
    };
    ALLOWED_VARIABLES.iter().any(|a| matches(a))
        || ALLOWED_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The server's whole environment: the allowlisted part of `host`, then `own` (the
/// server's variables), then `extra` (configured), later ones winning.
pub(crate) fn server_environment(
    host: impl IntoIterator<Item = (OsString, OsString)>,
    own: &[(String, String)],
    extra: &[(String, String)],
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = host
        .into_iter()
        .filter(|(name, _)| is_allowed(name))
        .collect();
    for (name, value) in own.iter().chain(extra) {
        env.retain(|(existing, _)| existing != OsStr::new(name));
        env.push((name.into(), value.into()));
    }
    env
}

/// An environment from `(name, value)` pairs, for tests.
#[cfg(test)]
pub(crate) fn env_of(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> Vec<(OsString, OsString)> {
        [
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("LC_ALL", "C"),
            ("XDG_CACHE_HOME", "/c"),
            ("OPENAI_API_KEY", "sk-planted"),
            ("ANTHROPIC_API_KEY", "planted"),
            ("GITHUB_TOKEN", "planted"),
            ("AWS_SECRET_ACCESS_KEY", "planted"),
            ("GEMINI_HOME", "/g"),
            ("HTTPS_PROXY", "http://proxy:3128"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect()
    }

    #[test]
    fn other_secrets_are_dropped() {
        let env = server_environment(host(), &[], &[]);
        let names: Vec<_> = env.iter().map(|(k, _)| k.to_string_lossy()).collect();
        for secret in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
        ] {
            assert!(!names.iter().any(|n| n == secret), "{secret} passed");
        }
        for kept in [
            "PATH",
            "HOME",
            "LC_ALL",
            "XDG_CACHE_HOME",
            "GEMINI_HOME",
            "HTTPS_PROXY",
        ] {
            assert!(names.iter().any(|n| n == kept), "{kept} dropped");
        }
    }

    #[test]
    fn own_and_extra_variables_are_added_and_win() {
        let own = [("ANTIGRAVITY_HARNESS_PATH".to_owned(), "/h".to_owned())];
        let extra = [
            ("MY_FLAG".to_owned(), "1".to_owned()),
            ("HOME".to_owned(), "/elsewhere".to_owned()),
        ];
        let env = server_environment(host(), &own, &extra);
        let get = |name: &str| {
            env.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        assert_eq!(get("ANTIGRAVITY_HARNESS_PATH").as_deref(), Some("/h"));
        assert_eq!(get("MY_FLAG").as_deref(), Some("1"));
        assert_eq!(get("HOME").as_deref(), Some("/elsewhere"));
        assert_eq!(env.iter().filter(|(k, _)| k == "HOME").count(), 1);
    }
}
