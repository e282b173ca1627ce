//! The browser sign-in of 1.3.0 headless (`sign_in.flow: browser`), over real stdio and
//! real loopback HTTP: `authenticate` runs `$BROWSER <url>` and is held until the
//! redirect with the URL's `state` and a `code` arrives; a redirect without a code fails
//! it; nobody signing in ends it after `wait_ms` with "Onboarding failed: Timed out …".
//! Sign-in state from `GEMINI_HOME` (`auth: from-home`) decides whether it is needed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Read;
use std::path::Path;

use agent_client_protocol::ErrorCode;
use serde_json::json;
use support::{WAIT, script_args, start_fake, write_script};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A `$BROWSER` that writes the URL it is given into a FIFO the test reads.
fn fifo_browser(dir: &Path) -> (String, std::path::PathBuf) {
    let fifo = dir.join("url.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let browser = dir.join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\nprintf '%s\\n' \"$1\" > {}\n", fifo.display()),
    )
    .unwrap();
    let made = std::process::Command::new("chmod")
        .arg("+x")
        .arg(&browser)
        .status()
        .unwrap();
    assert!(made.success());
    (browser.display().to_string(), fifo)
}

/// The URL the fake opened, read from the FIFO (bounded).
async fn opened_url(fifo: std::path::PathBuf) -> String {
    let read = tokio::task::spawn_blocking(move || {
        let mut text = String::new();
        std::fs::File::open(fifo)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        text
    });
    tokio::time::timeout(WAIT, read).await.unwrap().unwrap()
}

fn query_value<'a>(url: &'a str, key: &str) -> &'a str {
    let start = url.find(&format!("{key}=")).unwrap() + key.len() + 1;
    url[start..].split('&').next().unwrap().trim()
}

/// Sends `GET target` to the redirect port, as the user's browser does.
async fn redirect(port: &str, target: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(format!("127.0.0.1:{port}"))
        .await
        .unwrap();
    let request = format!("GET {target} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer
}

async fn flow(with_code: bool) -> Result<serde_json::Value, agent_client_protocol::Error> {
    let dir = tempfile::tempdir().unwrap();
    let (browser, fifo) = fifo_browser(dir.path());
    let script = write_script(
        dir.path(),
        "auth: required\nsign_in: {flow: browser, wait_ms: 10000}\n",
    );
    let fake = start_fake(
        &script_args(&script, &dir.path().join("journal")),
        &[("BROWSER", browser.as_str())],
    )
    .await;
    fake.request("initialize", json!({"protocolVersion": 1}))
        .await
        .unwrap();
    let user = async {
        let url = opened_url(fifo).await;
        assert!(
            url.starts_with("https://accounts.google.com/o/oauth2/v2/auth?"),
            "{url}"
        );
        let port = query_value(&url, "redirect_uri")
            .trim_start_matches("http%3A%2F%2F127.0.0.1%3A")
            .trim_end_matches("%2F")
            .to_owned();
        let state = query_value(&url, "state").to_owned();
        let target = if with_code {
            format!("/?state={state}&code=4%2Fabc")
        } else {
            "/".to_owned()
        };
        redirect(&port, &target).await
    };
    let (answer, page) = tokio::join!(
        fake.request("authenticate", json!({"methodId": "oauth-personal"})),
        user
    );
    assert!(
        page.starts_with(if with_code {
            "HTTP/1.1 200"
        } else {
            "HTTP/1.1 400"
        }),
        "{page}"
    );
    if answer.is_ok() {
        let session = fake
            .request("session/new", json!({"cwd": "/tmp", "mcpServers": []}))
            .await;
        assert!(session.is_ok(), "signed in after the redirect: {session:?}");
    }
    answer
}

#[tokio::test]
async fn the_redirect_with_state_and_code_completes_the_sign_in() {
    assert_eq!(flow(true).await.unwrap(), json!({}));
}

#[tokio::test]
async fn a_redirect_without_a_code_fails_the_sign_in() {
    let error = flow(false).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::AUTH_REQUIRED);
    assert!(
        error.message.starts_with("Onboarding failed"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn nobody_signing_in_times_out_as_onboarding_failed() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(
        dir.path(),
        "auth: required\nsign_in: {flow: browser, wait_ms: 200}\n",
    );
    let fake = start_fake(&script_args(&script, &dir.path().join("journal")), &[]).await;
    fake.request("initialize", json!({"protocolVersion": 1}))
        .await
        .unwrap();
    let error = fake
        .request("authenticate", json!({"methodId": "oauth-personal"}))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::AUTH_REQUIRED);
    assert_eq!(
        error.message,
        "Onboarding failed: Timed out waiting for the authentication flow to complete."
    );
}

#[tokio::test]
async fn the_sign_in_state_is_read_from_gemini_home() {
    for (settings, token, signed_in) in [
        (true, Some(u64::MAX / 2), true),
        (true, None, false),
        (false, Some(u64::MAX / 2), false),
        (true, Some(1_000), false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let state = home.join("antigravity-acp");
        std::fs::create_dir_all(&state).unwrap();
        if settings {
            std::fs::write(
                state.join("settings.json"),
                r#"{"auth":{"type":"oauth-personal"}}"#,
            )
            .unwrap();
        }
        if let Some(expiry) = token {
            std::fs::write(
                state.join("acp_token.json"),
                json!({"expiry_date": expiry}).to_string(),
            )
            .unwrap();
        }
        let script = write_script(dir.path(), "auth: from-home\n");
        let home = home.display().to_string();
        let fake = start_fake(
            &script_args(&script, &dir.path().join("journal")),
            &[("GEMINI_HOME", home.as_str())],
        )
        .await;
        fake.request("initialize", json!({"protocolVersion": 1}))
            .await
            .unwrap();
        let session = fake
            .request("session/new", json!({"cwd": "/tmp", "mcpServers": []}))
            .await;
        assert_eq!(
            session.is_ok(),
            signed_in,
            "settings {settings}, token {token:?}: {session:?}"
        );
    }
}
