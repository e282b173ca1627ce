//! The sign-in policy of the handshake. 1.3.0 answers `authenticate(oauth-personal)` only
//! when the browser flow it starts has finished, or after about 8.5 minutes; DSH must never
//! wait silently that long. So `authenticate` is sent only when the server can open a
//! browser (`$BROWSER` set, or a display on Linux), a notice says a sign-in is waiting in
//! the browser (never the URL: its `state` is a secret of the flow), and the wait is
//! bounded by [`SignIn::timeout`]. Every way it fails ends in `auth_required` with a
//! message saying how to sign in.

use std::ffi::{OsStr, OsString};
use std::time::Duration;

/// How the handshake may sign in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SignIn {
    /// How long `authenticate` may take (the browser flow).
    pub(crate) timeout: Duration,
    /// Whether the server can open a browser at all.
    pub(crate) browser: bool,
}

/// Why a sign-in could not be done, each with the way to do it instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SignInProblem {
    /// The server needs a sign-in and no browser can be opened for it.
    #[error(
        "the server needs a Google sign-in and cannot open a browser here ($BROWSER is unset and \
         there is no display); sign in once from a desktop session (run the server there and \
         complete the browser sign-in), or set auth.type in \
         $GEMINI_HOME/antigravity-acp/settings.json, then retry"
    )]
    NoBrowser,
    /// The browser sign-in was not completed in time.
    #[error(
        "the browser sign-in was not completed within {0} s; complete the sign-in in the \
         browser window the server opened (or sign in once from a desktop session), then retry"
    )]
    TimedOut(u64),
    /// The server refused the sign-in, or still requires one after it.
    #[error(
        "the server's sign-in did not complete; sign in to Antigravity from a desktop session \
         (the browser sign-in), or set auth.type in $GEMINI_HOME/antigravity-acp/settings.json, \
         then retry"
    )]
    NotCompleted,
}

fn is_set(env: &[(OsString, OsString)], name: &str) -> bool {
    env.iter()
        .any(|(key, value)| key == OsStr::new(name) && !value.is_empty())
}

impl SignIn {
    /// The policy for a server launched with `env`.
    pub(crate) fn new(timeout: Duration, env: &[(OsString, OsString)]) -> Self {
        let display =
            !cfg!(target_os = "linux") || is_set(env, "DISPLAY") || is_set(env, "WAYLAND_DISPLAY");
        Self {
            timeout,
            browser: is_set(env, "BROWSER") || display,
        }
    }

    /// Logs (without the URL) that a sign-in is waiting in the browser.
    pub(crate) fn announce(&self) {
        tracing::warn!(
            wait_ms = u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
            "the server needs a Google sign-in: complete it in the browser window the server \
             opened; waiting for it"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::env_of as env;

    #[test]
    fn a_browser_is_available_with_browser_set_or_a_display() {
        let wait = Duration::from_secs(1);
        assert!(SignIn::new(wait, &env(&[("BROWSER", "firefox")])).browser);
        assert!(SignIn::new(wait, &env(&[("DISPLAY", ":0")])).browser);
        assert_eq!(
            SignIn::new(wait, &env(&[("BROWSER", ""), ("PATH", "/bin")])).browser,
            !cfg!(target_os = "linux")
        );
    }

    #[test]
    fn every_problem_says_how_to_sign_in() {
        for problem in [
            SignInProblem::NoBrowser,
            SignInProblem::TimedOut(5),
            SignInProblem::NotCompleted,
        ] {
            let text = problem.to_string();
            assert!(
                text.contains("sign in") || text.contains("sign-in"),
                "{text}"
            );
            assert!(text.contains("retry"), "{text}");
        }
    }
}
