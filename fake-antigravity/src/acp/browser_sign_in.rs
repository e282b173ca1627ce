//! The browser sign-in of 1.3.0 headless (docs/antigravity-1.3.0.md §5): a loopback listener on
//! `127.0.0.1:<port>`, the Google OAuth URL with a fresh `state`, `$BROWSER <url>` when
//! set, the line `Open the following link to authenticate the ACP server: <url>` on
//! stderr (on stdout between frames, as 1.1.1, with `sign_in.url_on_stdout`), then the request is held until the redirect `GET /?state=…&code=…` arrives,
//! a redirect without `code` aborts it, or the wait runs out.

use std::time::Duration;

use agent_client_protocol::{Error, ErrorCode};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::acp::rpc_errors::onboarding_failed;
use crate::process::glog::Glog;
use crate::process::stdout_lines::StdoutLines;

/// The client id of the recorded URL (a public installed-app id).
const CLIENT_ID: &str = "1071006060591-tmhssin2h21lcre235vtolojh4g403ep.apps.googleusercontent.com";

/// -32000 "Onboarding failed: Timed out …".
fn timed_out() -> Error {
    Error::new(
        ErrorCode::AUTH_REQUIRED,
        "Onboarding failed: Timed out waiting for the authentication flow to complete.",
    )
    .data(json!({ "reason": "onboarding_failed" }))
}

fn random_hex() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The sign-in URL for a listener on `port` with `state`.
pub fn sign_in_url(port: u16, state: &str) -> String {
    format!(
        "https://accounts.google.com/o/oauth2/v2/auth?response_type=code&client_id={CLIENT_ID}\
         &redirect_uri=http%3A%2F%2F127.0.0.1%3A{port}%2F\
         &scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fcloud-platform+https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fuserinfo.email\
         &state={state}&access_type=offline&prompt=consent&code_challenge={}&code_challenge_method=S256",
        random_hex()
    )
}

/// Runs the flow; `Ok` once the redirect brought a code.
pub async fn browser_flow(
    log: Glog,
    wait: Duration,
    act_as_user: bool,
    stdout: Option<&StdoutLines>,
) -> Result<(), Error> {
    log.warning(
        "credential_manager.py:553",
        "Credentials missing or invalid. Launching browser login flow...",
    );
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|_| onboarding_failed())?;
    let port = listener
        .local_addr()
        .map_err(|_| onboarding_failed())?
        .port();
    let state = random_hex();
    let url = sign_in_url(port, &state);
    // `$BROWSER` is a list of commands separated like PATH; the first is tried.
    let browser = std::env::var("BROWSER").ok().filter(|b| !b.is_empty());
    let mut opened = browser.as_deref().and_then(|list| {
        let program = list.split(':').next()?;
        tokio::process::Command::new(program)
            .arg(&url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .ok()
    });
    let line = format!("Open the following link to authenticate the ACP server: {url}");
    match stdout {
        Some(stdout) => stdout.push(&line),
        None => eprintln!("{line}"),
    }
    let user = act_as_user.then(|| {
        let redirect = format!("/?state={state}&code=4%2Ffake-code");
        tokio::spawn(send_redirect(port, redirect))
    });
    let outcome = tokio::time::timeout(wait, redirect_outcome(&listener, &state)).await;
    if let Some(user) = user {
        user.abort();
    }
    if let Some(browser) = opened.as_mut() {
        // The stand-in browser may already have exited: nothing to report either way.
        if browser.start_kill().is_ok() {
            let _reaped = browser.wait().await;
        }
    }
    match outcome {
        Ok(Ok(())) => {
            log.info("credential_manager.py:601", "Authentication successful");
            Ok(())
        }
        Ok(Err(error)) => Err(error),
        Err(_) => Err(timed_out()),
    }
}

/// Waits for the redirect: `Ok` for the right state and a code, an error for a request
/// without a code; requests for other paths are answered 404 and ignored.
async fn redirect_outcome(listener: &TcpListener, state: &str) -> Result<(), Error> {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            return Err(onboarding_failed());
        };
        let mut buffer = vec![0u8; 4096];
        let read = stream.read(&mut buffer).await.unwrap_or(0);
        let request = String::from_utf8_lossy(&buffer[..read]).into_owned();
        let target = request
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string();
        let Some(query) = target
            .strip_prefix("/?")
            .or(target.strip_prefix("/").filter(|t| t.is_empty()))
        else {
            // A browser that hung up early changes nothing for the flow.
            let _answered = stream
                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                .await;
            continue;
        };
        let has = |key: &str, want: Option<&str>| {
            query.split('&').any(|pair| match pair.split_once('=') {
                Some((k, v)) => k == key && want.is_none_or(|w| w == v),
                None => false,
            })
        };
        let completed = has("state", Some(state)) && has("code", None);
        let body: &[u8] = if completed {
            b"HTTP/1.1 200 OK\r\ncontent-length: 27\r\n\r\nAuthentication successful.\n"
        } else {
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n"
        };
        let _answered = stream.write_all(body).await;
        return if completed {
            Ok(())
        } else {
            Err(onboarding_failed())
        };
    }
}

/// Acts as the user's browser: sends the redirect to the loopback port.
async fn send_redirect(port: u16, target: String) {
    if let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
        let request = format!("GET {target} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n\r\n");
        let mut sink = Vec::new();
        if stream.write_all(request.as_bytes()).await.is_ok() {
            let _answer = stream.read_to_end(&mut sink).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_names_the_loopback_port_and_the_state() {
        let url = sign_in_url(4242, "abc");
        assert!(
            url.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A4242%2F"),
            "{url}"
        );
        assert!(url.contains("&state=abc&"), "{url}");
    }
}
