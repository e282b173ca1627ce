//! `antigravity-acp-dsh login [--method M]`: the server's own sign-in, run on purpose. A
//! server started as the adapter starts one ([`Probe`]) is sent ACP `authenticate` with
//! the method (default: the configured `authMethod`, `oauth-personal` unless set), which
//! must be one `initialize` advertised; then one `session/new` confirms the sign-in holds.
//!
//! 1.3.0 runs the browser flow itself: it binds a loopback port, runs `$BROWSER` if set,
//! and prints "Open the following link to authenticate the ACP server: `<url>`" on stderr
//! (docs/antigravity-1.3.0.md §5). The adapter keeps that stderr and never logs it (the
//! URL's `state` is a secret of the flow); `login` alone reads that one line and hands the
//! URL to the caller's `on_url` ([`SignInUrl`]), which shows it on the user's terminal
//! and nowhere else. Without a browser (an SSH session with no `DISPLAY` or
//! `WAYLAND_DISPLAY`), it also names the loopback port the redirect needs and the
//! `ssh -L` line that forwards it from the user's own computer.

use std::ffi::{OsStr, OsString};
use std::time::Duration;

use agent_client_protocol::ErrorCode;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::config::{AdapterConfig, AuthMethod};
use crate::contract::{LlmError, LlmErrorCode};
use crate::error::AdapterError;

use super::probe::{Probe, SessionOutcome};
use super::report::{CommandOutput, EXIT_FAILED, EXIT_OK, EXIT_USAGE};

/// What 1.3.0 prints before the sign-in URL.
pub const URL_MARKER: &str = "Open the following link to authenticate the ACP server: ";

/// How long `login` waits for the sign-in by default (1.3.0 gives up after about 8.5
/// minutes itself).
pub const DEFAULT_WAIT: Duration = Duration::from_secs(600);

/// What `login` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginOptions {
    /// The method id (`None`: the configured `authMethod`).
    pub method: Option<String>,
    /// How long to wait for the sign-in to complete.
    pub wait: Duration,
    /// Cancelled when the user gives up (Ctrl-C): the wait ends, the server is disposed of.
    pub cancel: CancellationToken,
}

impl Default for LoginOptions {
    fn default() -> Self {
        Self {
            method: None,
            wait: DEFAULT_WAIT,
            cancel: CancellationToken::new(),
        }
    }
}

/// The sign-in URL the server printed, for the user's terminal only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignInUrl {
    /// The URL (with the flow's secret `state`: never log it).
    pub url: String,
    /// The loopback port the browser is sent back to, when the URL names one.
    pub port: Option<u16>,
    /// The `ssh -L` line that forwards that port, in an SSH session without a display.
    pub forward: Option<String>,
    /// All of it, for people.
    pub text: String,
}

/// How the login came out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoginReport {
    /// `login`.
    pub command: &'static str,
    /// The method used.
    pub method: String,
    /// Whether the server is signed in now.
    pub signed_in: bool,
    /// Whether the sign-in URL was shown.
    pub url_shown: bool,
    /// What went wrong: a code and the adapter's message.
    pub error: Option<LlmError>,
    /// The exit code.
    pub exit_code: i32,
}

/// Runs the sign-in; `on_url` is called once if the server prints its URL.
pub async fn login(
    config: AdapterConfig,
    options: LoginOptions,
    on_url: impl Fn(SignInUrl) + Send,
) -> CommandOutput {
    let method_id = options
        .method
        .clone()
        .unwrap_or_else(|| config.auth_method.as_str().to_owned());
    let Some(method) = AuthMethod::from_id(&method_id) else {
        let known: Vec<&str> = AuthMethod::ALL.iter().map(|m| m.as_str()).collect();
        let error = LlmError::new(
            LlmErrorCode::AcpInvalidConfig,
            format!("--method: `{method_id}` is not one of {}", known.join(", ")),
        );
        return report(method_id, false, false, Some(error), EXIT_USAGE);
    };
    let env = config
        .host_env
        .clone()
        .unwrap_or_else(|| std::env::vars_os().collect());
    let probe = match Probe::start(&config).await {
        Ok(probe) => probe,
        Err(error) => return report(method_id, false, false, Some(error), EXIT_FAILED),
    };
    let outcome = sign_in(probe, method, &options, &env, on_url).await;
    let (signed_in, shown, error) = outcome;
    let code = if signed_in { EXIT_OK } else { EXIT_FAILED };
    report(method.as_str().to_owned(), signed_in, shown, error, code)
}

/// Authenticates and confirms; disposes of the probe in every case. (signed in, URL
/// shown, what failed).
async fn sign_in(
    mut probe: Probe,
    method: AuthMethod,
    options: &LoginOptions,
    env: &[(OsString, OsString)],
    on_url: impl Fn(SignInUrl) + Send,
) -> (bool, bool, Option<LlmError>) {
    let offered = probe.methods();
    if !offered.iter().any(|m| m == method.as_str()) {
        probe.dispose().await;
        let error = LlmError::new(
            LlmErrorCode::AcpAuthRequired,
            format!(
                "the server does not offer the sign-in method {method}; it offers {}",
                if offered.is_empty() {
                    "none".to_owned()
                } else {
                    offered.join(", ")
                }
            ),
        );
        return (false, false, Some(error));
    }
    let mut shown = false;
    let authenticated = {
        let mut updates = probe.stderr_updates();
        let answer = probe.authenticate(method.as_str());
        tokio::pin!(answer);
        let waiting = tokio::time::timeout(options.wait, async {
            loop {
                tokio::select! {
                    answer = &mut answer => return answer,
                    changed = changed(&mut updates), if !shown => {
                        if !changed {
                            updates = None;
                        }
                        if let Some(url) = probe.stderr_line_after(URL_MARKER) {
                            on_url(sign_in_url(url, env, options.wait));
                            shown = true;
                        }
                    }
                }
            }
        });
        let waited = tokio::select! {
            waited = waiting => Some(waited),
            () = options.cancel.cancelled() => None,
        };
        match waited {
            None => Err(LlmError::new(
                LlmErrorCode::AcpAuthRequired,
                "the sign-in was interrupted; nothing was signed in",
            )),
            Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(error))) => Err(authenticate_failed(method, &error)),
            Some(Err(_)) => Err(LlmError::new(
                LlmErrorCode::AcpAuthRequired,
                format!(
                    "the sign-in was not completed within {} s; run login again and complete it \
                     in the browser",
                    options.wait.as_secs()
                ),
            )),
        }
    };
    let confirmed = match authenticated {
        Ok(()) => match probe.open_session().await {
            Ok(SessionOutcome::Opened) => Ok(()),
            Ok(SessionOutcome::SignInNeeded) => Err(LlmError::new(
                LlmErrorCode::AcpAuthRequired,
                "the server accepted the sign-in but still asks for one",
            )),
            Err(error) => Err(error),
        },
        Err(error) => Err(error),
    };
    probe.dispose().await;
    match confirmed {
        Ok(()) => (true, shown, None),
        Err(error) => (false, shown, Some(error)),
    }
}

/// Waits for the next stderr write; `false` once stderr closed (or there is none to watch).
async fn changed(updates: &mut Option<tokio::sync::watch::Receiver<()>>) -> bool {
    match updates {
        Some(updates) => updates.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}

/// A failed `authenticate`, as the adapter's handshake words it.
fn authenticate_failed(method: AuthMethod, error: &agent_client_protocol::Error) -> LlmError {
    let message = match error.code {
        // 1.3.0 refuses a key method whose variable is missing with -32602.
        ErrorCode::INVALID_PARAMS if !method.needs_browser() => format!(
            "the sign-in method {method} needs {}; set it where DSH starts, then run login again",
            method.needs()
        ),
        // -32000 "Onboarding failed": the browser flow failed or timed out.
        ErrorCode::AUTH_REQUIRED => "the server's sign-in did not complete (it failed or timed \
                                     out in the browser); run login again"
            .to_owned(),
        _ => return AdapterError::remote("authenticate", error).to_llm_error(),
    };
    LlmError::new(LlmErrorCode::AcpAuthRequired, message)
}

fn report(
    method: String,
    signed_in: bool,
    url_shown: bool,
    error: Option<LlmError>,
    exit_code: i32,
) -> CommandOutput {
    let text = match &error {
        None => format!("signed in with {method}\n"),
        Some(error) => format!(
            "not signed in ({}): {}\n",
            error.code.as_str(),
            error.message
        ),
    };
    let report = LoginReport {
        command: "login",
        method,
        signed_in,
        url_shown,
        error,
        exit_code,
    };
    CommandOutput::new(&report, text, exit_code)
}

/// The URL with its port and, in an SSH session without a display, the forward.
fn sign_in_url(url: String, env: &[(OsString, OsString)], wait: Duration) -> SignInUrl {
    let port = redirect_port(&url);
    let forward = port.and_then(|port| forward_line(env, port));
    let mut text = format!(
        "Sign in with this link in a browser (it is shown here only, never logged):\n\n  {url}\n\n"
    );
    if let (Some(port), Some(forward)) = (port, &forward) {
        text.push_str(&format!(
            "The browser is sent back to http://127.0.0.1:{port}/ on this machine, and this SSH \
             session has no display: on your own computer, forward that port first, then open \
             the link there:\n\n  {forward}\n\n"
        ));
    }
    text.push_str(&format!(
        "Waiting up to {} s for the sign-in to complete...\n",
        wait.as_secs()
    ));
    SignInUrl {
        url,
        port,
        forward,
        text,
    }
}

/// The port of the URL's `redirect_uri` when it is `http://127.0.0.1:<port>` or
/// `http://localhost:<port>` (percent-encoded or not).
fn redirect_port(url: &str) -> Option<u16> {
    let query = url.split_once('?')?.1;
    let encoded = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("redirect_uri="))?;
    let redirect = percent_decode(encoded);
    let rest = redirect
        .strip_prefix("http://127.0.0.1:")
        .or_else(|| redirect.strip_prefix("http://localhost:"))?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// `%XX` escapes decoded (others left as they are).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        let escaped = (byte == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(decoded) => {
                out.push(decoded);
                i += 3;
            }
            None => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `ssh -L PORT:127.0.0.1:PORT user@host` for an SSH session (`SSH_CONNECTION` set) with
/// no display (`DISPLAY` and `WAYLAND_DISPLAY` unset): the host is the address the user's
/// client reached (`SSH_CONNECTION`'s third field, with `-p` when its port is not 22), the
/// user `$USER` (or `$LOGNAME`).
fn forward_line(env: &[(OsString, OsString)], port: u16) -> Option<String> {
    let var = |name: &str| {
        env.iter()
            .rev()
            .find(|(key, value)| key == OsStr::new(name) && !value.is_empty())
            .and_then(|(_, value)| value.to_str())
    };
    if var("DISPLAY").is_some() || var("WAYLAND_DISPLAY").is_some() {
        return None;
    }
    let connection: Vec<&str> = var("SSH_CONNECTION")?.split_whitespace().collect();
    let host = connection.get(2).copied().unwrap_or("this-host");
    let ssh_port = match connection.get(3) {
        Some(&p) if p != "22" => format!("-p {p} "),
        _ => String::new(),
    };
    let target = match var("USER").or_else(|| var("LOGNAME")) {
        Some(user) => format!("{user}@{host}"),
        None => host.to_owned(),
    };
    Some(format!("ssh {ssh_port}-L {port}:127.0.0.1:{port} {target}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    const URL: &str = "https://accounts.google.com/o/oauth2/v2/auth?response_type=code\
                       &redirect_uri=http%3A%2F%2F127.0.0.1%3A43123%2F&scope=x&state=abc";

    #[test]
    fn the_redirect_port_is_read_from_the_url() {
        assert_eq!(redirect_port(URL), Some(43123));
        assert_eq!(
            redirect_port("https://x/?redirect_uri=http://localhost:8085/cb"),
            Some(8085)
        );
        assert_eq!(
            redirect_port("https://x/?redirect_uri=https%3A%2F%2Fexample.com%2F"),
            None
        );
        assert_eq!(redirect_port("https://x/"), None);
        assert_eq!(percent_decode("a%2Fb%zz%4"), "a/b%zz%4");
    }

    /// The forward is offered in an SSH session without a display, and only there.
    #[test]
    fn an_ssh_session_without_a_display_gets_the_forward() {
        let ssh = [
            ("SSH_CONNECTION", "10.0.0.9 50000 10.0.0.5 22"),
            ("USER", "ana"),
        ];
        assert_eq!(
            forward_line(&env(&ssh), 43123).as_deref(),
            Some("ssh -L 43123:127.0.0.1:43123 ana@10.0.0.5")
        );
        let other_port = [("SSH_CONNECTION", "::1 5 fe80::1 2222"), ("LOGNAME", "bo")];
        assert_eq!(
            forward_line(&env(&other_port), 7).as_deref(),
            Some("ssh -p 2222 -L 7:127.0.0.1:7 bo@fe80::1")
        );
        let with_display = [
            ("SSH_CONNECTION", "a 1 b 22"),
            ("DISPLAY", "localhost:10.0"),
        ];
        assert_eq!(forward_line(&env(&with_display), 7), None);
        assert_eq!(forward_line(&env(&[("USER", "ana")]), 7), None);
        let url = sign_in_url(URL.to_owned(), &env(&ssh), Duration::from_secs(30));
        assert_eq!(url.port, Some(43123));
        assert!(url.text.contains(URL), "{}", url.text);
        assert!(
            url.text
                .contains("ssh -L 43123:127.0.0.1:43123 ana@10.0.0.5")
        );
        let local = sign_in_url(URL.to_owned(), &env(&[("DISPLAY", ":0")]), DEFAULT_WAIT);
        assert_eq!(local.forward, None);
        assert!(!local.text.contains("ssh"), "{}", local.text);
    }

    #[test]
    fn a_failed_authenticate_says_what_to_do() {
        let missing_key = agent_client_protocol::Error::new(ErrorCode::INVALID_PARAMS, "key");
        let error = authenticate_failed(AuthMethod::GeminiApiKey, &missing_key);
        assert_eq!(error.code, LlmErrorCode::AcpAuthRequired);
        assert!(
            error.message.contains("GEMINI_API_KEY"),
            "{}",
            error.message
        );
        let onboarding =
            agent_client_protocol::Error::new(ErrorCode::AUTH_REQUIRED, "Onboarding failed");
        let error = authenticate_failed(AuthMethod::OauthPersonal, &onboarding);
        assert!(
            error.message.contains("did not complete"),
            "{}",
            error.message
        );
        let other = agent_client_protocol::Error::new(ErrorCode::INTERNAL_ERROR, "secret text");
        let error = authenticate_failed(AuthMethod::OauthPersonal, &other);
        assert_eq!(error.code, LlmErrorCode::AcpRpcError);
        assert!(!error.message.contains("secret"), "{}", error.message);
    }

    #[tokio::test]
    async fn an_unknown_method_is_a_usage_error() {
        let options = LoginOptions {
            method: Some("password".into()),
            ..LoginOptions::default()
        };
        let output = login(AdapterConfig::default(), options, |_| {}).await;
        assert_eq!(output.exit_code, EXIT_USAGE);
        assert!(output.text.contains("password"), "{}", output.text);
    }
}
