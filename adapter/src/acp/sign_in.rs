//! The sign-in policy of the handshake. The adapter signs in only with the method the user
//! configured (`authMethod`), and never when the server's `settings.json` already names
//! another: authenticating would switch the user's set-up for good. 1.3.0 answers an OAuth
//! `authenticate` only when the browser flow it starts has finished, or after about 8.5
//! minutes; DSH must never wait silently that long. So an OAuth `authenticate` is sent
//! only when the server can open a browser (`$BROWSER` set, or a display on Linux), a
//! notice says a sign-in is waiting in the browser (never the URL: its `state` is a secret
//! of the flow), and the wait is bounded by [`SignIn::timeout`]. Every way it fails ends in
//! `auth_required` with a message saying how to sign in.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::time::Duration;

use crate::config::AuthMethod;
use crate::server::{SettledMethod, server_home, settled_method};

/// How the handshake may sign in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SignIn {
    /// How long `authenticate` may take (the browser flow).
    pub(crate) timeout: Duration,
    /// Whether the server can open a browser at all.
    pub(crate) browser: bool,
    /// The only method the adapter signs in with.
    pub(crate) method: AuthMethod,
    /// The server's home, where its `settings.json` names the method set up.
    home: Option<PathBuf>,
}

/// Why a sign-in could not be done, each with the way to do it instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SignInProblem {
    /// The server's `settings.json` names another method than the configured one; the
    /// adapter never switches it.
    #[error(
        "the server is set up for the sign-in method {settled} \
         ($GEMINI_HOME/antigravity-acp/settings.json) and needs a sign-in, but this adapter is \
         configured for {configured}, and it never switches a set-up method; set authMethod \
         to {settled} in the plugin config, or switch with `antigravity-acp-dsh login --method \
         {configured}`, then retry"
    )]
    OtherMethodSetUp {
        /// What `settings.json` names (a method the adapter does not know reads `another`).
        settled: &'static str,
        /// The configured method.
        configured: AuthMethod,
    },
    /// The server does not offer the configured method.
    #[error(
        "the server does not offer the configured sign-in method {0}; set authMethod to one \
         it offers (oauth-personal, oauth-business, gemini-api-key or agent-platform), then retry"
    )]
    MethodNotOffered(AuthMethod),
    /// The method's key or project is missing from the server's environment.
    #[error(
        "the sign-in method {method} needs {needs}; it is passed through to the server, so \
         set it where DSH starts, then retry"
    )]
    MissingCredentials {
        /// The configured method.
        method: AuthMethod,
        /// What it needs ([`AuthMethod::needs`]).
        needs: &'static str,
    },
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
    pub(crate) fn new(timeout: Duration, method: AuthMethod, env: &[(OsString, OsString)]) -> Self {
        let display =
            !cfg!(target_os = "linux") || is_set(env, "DISPLAY") || is_set(env, "WAYLAND_DISPLAY");
        Self {
            timeout,
            browser: is_set(env, "BROWSER") || display,
            method,
            home: server_home(env),
        }
    }

    /// Why the adapter must not sign in with its method here, if it must not: the
    /// server's `settings.json` already names another method.
    pub(crate) fn refusal(&self) -> Option<SignInProblem> {
        let settled = match self.home.as_deref().map(settled_method) {
            None | Some(SettledMethod::None) => return None,
            Some(SettledMethod::Known(method)) if method == self.method => return None,
            Some(SettledMethod::Known(method)) => method.as_str(),
            Some(SettledMethod::Other) => "another",
        };
        Some(SignInProblem::OtherMethodSetUp {
            settled,
            configured: self.method,
        })
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
        let oauth = AuthMethod::OauthPersonal;
        assert!(SignIn::new(wait, oauth, &env(&[("BROWSER", "firefox")])).browser);
        assert!(SignIn::new(wait, oauth, &env(&[("DISPLAY", ":0")])).browser);
        assert_eq!(
            SignIn::new(wait, oauth, &env(&[("BROWSER", ""), ("PATH", "/bin")])).browser,
            !cfg!(target_os = "linux")
        );
    }

    #[test]
    fn every_problem_says_how_to_sign_in() {
        for problem in [
            SignInProblem::NoBrowser,
            SignInProblem::TimedOut(5),
            SignInProblem::NotCompleted,
            SignInProblem::OtherMethodSetUp {
                settled: "gemini-api-key",
                configured: AuthMethod::OauthPersonal,
            },
            SignInProblem::MethodNotOffered(AuthMethod::OauthBusiness),
            SignInProblem::MissingCredentials {
                method: AuthMethod::GeminiApiKey,
                needs: AuthMethod::GeminiApiKey.needs(),
            },
        ] {
            let text = problem.to_string();
            assert!(
                text.contains("sign in") || text.contains("sign-in"),
                "{text}"
            );
            assert!(text.contains("retry"), "{text}");
        }
    }

    /// A method the server's settings.json names is never switched: only the configured
    /// one, or none set up yet, lets the adapter sign in.
    #[test]
    fn a_set_up_method_is_never_switched() -> crate::TestResult {
        let home = tempfile::tempdir()?;
        let dir = home.path().join("antigravity-acp");
        std::fs::create_dir_all(&dir)?;
        let vars = env(&[("GEMINI_HOME", &home.path().display().to_string())]);
        let wait = Duration::from_secs(1);
        let oauth = SignIn::new(wait, AuthMethod::OauthPersonal, &vars);
        assert_eq!(oauth.refusal(), None, "nothing set up yet");
        std::fs::write(
            dir.join("settings.json"),
            r#"{"auth":{"type":"gemini-api-key"}}"#,
        )?;
        let refusal = oauth
            .refusal()
            .ok_or("an API-key set-up was switched")?
            .to_string();
        assert!(
            refusal.contains("gemini-api-key") && refusal.contains("oauth-personal"),
            "{refusal}"
        );
        assert!(
            refusal.contains("login --method oauth-personal"),
            "{refusal}"
        );
        let key = SignIn::new(wait, AuthMethod::GeminiApiKey, &vars);
        assert_eq!(key.refusal(), None);
        Ok(())
    }
}
