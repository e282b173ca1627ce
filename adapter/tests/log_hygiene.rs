//! C73 from outside: every log line of a failing tool turn, captured at every level up to
//! debug and for every target (the adapter's and its dependencies', the ACP SDK's
//! included), holds none of a planted secret, whether the secret came in the server's
//! stderr, a remote error message, the prompt (system and user), or was the bridge's
//! bearer token; neither does the `LlmError` DSH gets.
//!
//! At trace the ACP SDK logs whole JSON-RPC frames, prompts included: the adapter cannot
//! filter another crate's events in the host's subscriber, so the README says not to run
//! `agent_client_protocol` at trace in production. This test stops at debug.
//!
//! The leaky server is this test binary itself (`harness = false`), so the test runs on
//! every system, Windows under Wine included.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests make fixtures on disk and start stand-in servers (adapter/clippy.toml)"
)]
#![allow(missing_docs)]

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use antigravity_acp::contract::{GenerateOptions, LlmAdapter, Message, StreamChunk, ToolSchema};
use antigravity_acp::{AdapterConfig, AntigravityProvider, ServerCommand};
use futures::StreamExt;
use libtest_mimic::{Arguments, Failed, Trial};
use test_support::{TestResult, within};

const SECRET: &str = "PLANTED-SECRET-7f3a9c";
const BOUND: Duration = Duration::from_secs(20);

/// Every formatted log line, kept in memory.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut lines) = self.0.lock() {
            lines.extend_from_slice(buf);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        self.0
            .lock()
            .map(|lines| String::from_utf8_lossy(&lines).into_owned())
            .unwrap_or_default()
    }
}

/// The environment variable that makes this test binary the leaky stand-in server
/// ([`leaky_server_main`]) instead of running the test.
const STAND_IN: &str = "LOG_HYGIENE_LEAKY_SERVER";

/// The stand-in server: this test binary again, with [`STAND_IN`] set. It records every
/// line it reads in `$LINES`, echoes each on stderr with the secret, opens a session, and
/// fails the prompt with a remote error whose message carries the secret. A program of
/// its own (not a shell script) so that the test runs on Windows too.
fn leaky_server(lines: &Path) -> Result<ServerCommand, test_support::Failure> {
    let program = std::env::current_exe()?;
    Ok(ServerCommand {
        program: program.into_os_string().into(),
        args: Vec::new(),
        env: vec![
            (STAND_IN.into(), "1".into()),
            ("LINES".into(), lines.display().to_string()),
            ("SECRET".into(), SECRET.into()),
        ],
    })
}

/// The leaky stand-in's main loop (see [`leaky_server`]): ends when stdin closes.
fn leaky_server_main() -> std::io::Result<()> {
    use std::io::BufRead;
    let secret = std::env::var("SECRET").unwrap_or_default();
    let lines = std::env::var_os("LINES").ok_or_else(|| std::io::Error::other("no $LINES"))?;
    let mut record = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(lines)?;
    eprintln!("starting; the secret is {secret}");
    let mut stdout = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        writeln!(record, "{line}")?;
        eprintln!("got {line} ({secret})");
        let Ok(frame) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let id = frame.get("id").cloned().unwrap_or_default();
        let answer = match frame.get("method").and_then(serde_json::Value::as_str) {
            Some("initialize") => serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": 1,
                "agentCapabilities": {
                    "loadSession": true,
                    "promptCapabilities": {"image": true, "audio": true, "embeddedContext": true},
                    "mcpCapabilities": {"http": true, "sse": true}
                },
                "authMethods": []
            }}),
            Some("session/new") => {
                serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"sessionId": "s1"}})
            }
            Some("session/prompt") => serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32603, "message": format!("boom: {secret}"), "data": secret
            }}),
            _ => continue,
        };
        writeln!(stdout, "{answer}")?;
        stdout.flush()?;
    }
    Ok(())
}

/// The bearer token the server was given, read from what it received.
fn bearer_token(lines: &Path) -> Result<String, test_support::Failure> {
    let received = std::fs::read_to_string(lines)?;
    let start = received
        .find("Bearer ")
        .ok_or("the server was given no bearer token")?
        + "Bearer ".len();
    let token: String = received[start..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    assert_eq!(token.len(), 64, "unexpected token shape");
    Ok(token)
}

/// The test binary's entry (`harness = false`): the stand-in server when [`STAND_IN`] is
/// set, else the test, under libtest's arguments (`--skip`, `--exact`, filters).
fn main() -> std::process::ExitCode {
    if std::env::var_os(STAND_IN).is_some() {
        return match leaky_server_main() {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("leaky stand-in: {error}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    let trial = Trial::test("no_log_line_and_no_error_carries_a_planted_secret", || {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| Failed::from(e.to_string()))?
            .block_on(no_log_line_and_no_error_carries_a_planted_secret())
            .map_err(|e| Failed::from(e.to_string()))
    });
    libtest_mimic::run(&Arguments::from_args(), vec![trial]).exit_code()
}

async fn no_log_line_and_no_error_carries_a_planted_secret() -> TestResult {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::set_global_default(subscriber)?;

    let scratch = tempfile::tempdir()?;
    let lines = scratch.path().join("received.jsonl");
    let turns = scratch.path().join("turns");
    std::fs::create_dir_all(&turns)?;
    let provider = AntigravityProvider::new(AdapterConfig {
        server: leaky_server(&lines)?.into(),
        scratch_root: Some(turns),
        shutdown_grace: Duration::from_millis(200),
        // The stand-in records what it read beside the turns, outside its scratch root.
        extra_write_paths: vec![scratch.path().to_path_buf()],
        ..AdapterConfig::default()
    });
    let mut request = GenerateOptions::new(
        "antigravity-acp",
        "server-default",
        vec![Message::user(format!("user prompt {SECRET}"))],
    );
    request.system = Some(format!("system prompt {SECRET}"));
    request.tools.get_or_insert_default().push(ToolSchema {
        name: "read_file".into(),
        description: "Reads a file".into(),
        parameters: serde_json::json!({"type": "object"}),
    });
    let items = within(
        BOUND,
        "the stream's end",
        provider.stream(request).collect::<Vec<_>>(),
    )
    .await?;
    within(BOUND, "disposal", provider.dispose()).await?;

    let error = match items.last() {
        Some(StreamChunk::Finish { reason, .. }) if reason.failure().is_some() => {
            reason.failure().cloned().ok_or("no failure")?
        }
        other => return Err(format!("the turn did not fail: {other:?}").into()),
    };
    assert_eq!(error.code, "ACP_RPC_ERROR", "{error:?}");
    let token = bearer_token(&lines)?;
    let received = std::fs::read_to_string(&lines)?;
    assert!(
        received.contains(SECRET),
        "the prompt never reached the server, so it proves nothing"
    );
    let logs = captured.text();
    assert!(
        logs.lines().count() > 0,
        "nothing was logged at debug, so the capture proves nothing"
    );
    for (what, planted) in [("the secret", SECRET), ("the bearer token", token.as_str())] {
        assert!(
            !format!("{error:?}").contains(planted),
            "{what} is in the LlmError"
        );
        for line in logs.lines() {
            assert!(!line.contains(planted), "{what} is logged: {line}");
        }
    }
    Ok(())
}
