//! Test support: run the real `fake-antigravity` binary over real stdio with an ACP SDK
//! client, and a tiny real rmcp Streamable-HTTP server on 127.0.0.1:0.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

pub mod mcp_server;

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Agent, ByteStreams, Client, UntypedMessage, on_receive_notification, on_receive_request,
};
use serde_json::Value;
use tokio::process::Child;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// The bound on every wait in these tests.
pub const WAIT: Duration = Duration::from_secs(20);

/// A request the fake sent to the client, waiting for the test's answer.
pub struct IncomingRequest {
    /// Its method.
    pub method: String,
    /// Its params.
    pub params: Value,
    /// Where the answer goes.
    pub responder: Responder<Value>,
}

/// A running fake with an ACP SDK client connected to its stdio.
pub struct FakeSession {
    /// The client's connection.
    pub cx: ConnectionTo<Agent>,
    /// The params of every `session/update` (and any other notification), in order.
    pub notifications: mpsc::Receiver<(String, Value)>,
    /// Requests from the fake (`session/request_permission`).
    pub requests: mpsc::Receiver<IncomingRequest>,
    stop: Option<oneshot::Sender<()>>,
    driver: Option<JoinHandle<Result<(), agent_client_protocol::Error>>>,
    child: Child,
}

/// Starts the binary with `args` (and `envs`) and connects an ACP client to it.
pub async fn start_fake(args: &[String], envs: &[(&str, &str)]) -> FakeSession {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_fake-antigravity"));
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .env_remove("GEMINI_API_KEY")
        // The fake writes into a `GEMINI_HOME` set in its environment: a test names its
        // own, never the developer's.
        .env_remove("GEMINI_HOME")
        .kill_on_drop(true);
    for (name, value) in envs {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("spawn fake-antigravity");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());

    let (notification_tx, notifications) = mpsc::channel(1024);
    let (request_tx, requests) = mpsc::channel(64);
    let (cx_tx, cx_rx) = oneshot::channel();
    let (stop, stop_rx) = oneshot::channel::<()>();
    let driver = tokio::spawn(
        Client
            .v1()
            .name("fake-antigravity-tests")
            .on_receive_notification(
                async move |n: UntypedMessage, _cx: ConnectionTo<Agent>| {
                    let (method, params) = n.into_parts();
                    notification_tx.send((method, params)).await.ok();
                    Ok(())
                },
                on_receive_notification!(),
            )
            .on_receive_request(
                async move |r: UntypedMessage,
                            responder: Responder<Value>,
                            _cx: ConnectionTo<Agent>| {
                    let (method, params) = r.into_parts();
                    request_tx
                        .send(IncomingRequest {
                            method,
                            params,
                            responder,
                        })
                        .await
                        .ok();
                    Ok(())
                },
                on_receive_request!(),
            )
            .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
                cx_tx.send(cx.clone()).ok();
                stop_rx.await.ok();
                Ok(())
            }),
    );
    let cx = tokio::time::timeout(WAIT, cx_rx)
        .await
        .expect("client connected in time")
        .expect("client connection");
    FakeSession {
        cx,
        notifications,
        requests,
        stop: Some(stop),
        driver: Some(driver),
        child,
    }
}

impl FakeSession {
    /// Sends an untyped request and waits (bounded) for the raw answer.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Value, agent_client_protocol::Error> {
        let sent = self
            .cx
            .send_request(UntypedMessage::new(method, params).expect("params"));
        tokio::time::timeout(WAIT, sent.block_task())
            .await
            .expect("answer in time")
    }

    /// Sends `session/prompt` with one text block; the task ends with the raw answer.
    pub fn start_prompt(
        &self,
        session_id: &str,
        text: &str,
    ) -> JoinHandle<Result<Value, agent_client_protocol::Error>> {
        let params = serde_json::json!({
            "sessionId": session_id,
            "prompt": [{"type": "text", "text": text}]
        });
        let sent = self
            .cx
            .send_request(UntypedMessage::new("session/prompt", params).expect("params"));
        tokio::spawn(sent.block_task())
    }

    /// The next notification (bounded wait).
    pub async fn next_notification(&mut self) -> (String, Value) {
        tokio::time::timeout(WAIT, self.notifications.recv())
            .await
            .expect("notification in time")
            .expect("notification channel open")
    }

    /// The next `session/update`'s `update` object, past the end-of-turn `usage_update`
    /// the fake sends by default (`turn_usage`; `tests/turn_usage.rs` reads it).
    pub async fn next_update(&mut self) -> Value {
        loop {
            let (method, params) = self.next_notification().await;
            assert_eq!(method, "session/update", "unexpected notification {params}");
            if params["update"]["sessionUpdate"] != "usage_update" {
                return params["update"].clone();
            }
        }
    }

    /// The next request from the fake (bounded wait).
    pub async fn next_request(&mut self) -> IncomingRequest {
        tokio::time::timeout(WAIT, self.requests.recv())
            .await
            .expect("request in time")
            .expect("request channel open")
    }

    /// Opens a session (no MCP servers) and returns its id, consuming the
    /// `available_commands_update` that follows.
    pub async fn new_session(&mut self, mcp_servers: Value) -> String {
        let opened = self
            .request(
                "session/new",
                serde_json::json!({"cwd": "/tmp", "mcpServers": mcp_servers}),
            )
            .await
            .expect("session/new");
        let update = self.next_update().await;
        assert_eq!(update["sessionUpdate"], "available_commands_update");
        opened["sessionId"].as_str().expect("sessionId").to_string()
    }

    /// Closes the client (the fake's stdin) and waits for the fake to exit.
    pub async fn close(mut self) -> ExitStatus {
        if let Some(stop) = self.stop.take() {
            stop.send(()).ok();
        }
        if let Some(driver) = self.driver.take() {
            tokio::time::timeout(WAIT, driver)
                .await
                .expect("client stopped in time")
                .expect("client task")
                .expect("client connection ended cleanly");
        }
        tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("fake exited in time")
            .expect("fake exit status")
    }
}

/// Writes `text` as a script file in `dir`.
pub fn write_script(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("script.yaml");
    std::fs::write(&path, text).expect("write script");
    path
}

/// `--script FILE --journal DIR` arguments.
pub fn script_args(script: &Path, journal: &Path) -> Vec<String> {
    vec![
        "--script".into(),
        script.display().to_string(),
        "--journal".into(),
        journal.display().to_string(),
    ]
}

/// The journal of the first (usually only) fake process that journaled into `dir`.
pub fn first_journal(dir: &Path) -> Vec<fake_antigravity::JournalEntry> {
    let mut journals = fake_antigravity::journal::read_dir(dir).expect("journal");
    assert!(!journals.is_empty(), "no journal in {}", dir.display());
    journals.remove(0)
}

/// The answer of a prompt started with [`FakeSession::start_prompt`] (bounded wait).
pub async fn prompt_answer(
    prompt: JoinHandle<Result<Value, agent_client_protocol::Error>>,
) -> Value {
    tokio::time::timeout(WAIT, prompt)
        .await
        .expect("prompt answered in time")
        .expect("prompt task")
        .expect("prompt succeeded")
}

/// A fake running a script with a journal, and one open session.
pub struct ScriptedSession {
    /// Holds the script and the journal; removed on drop.
    pub dir: tempfile::TempDir,
    /// Where the fake journals.
    pub journal_dir: PathBuf,
    /// The running fake.
    pub fake: FakeSession,
    /// The session `session/new` opened.
    pub session_id: String,
}

/// Starts the fake on `script` (YAML) with a journal and opens a session given
/// `mcp_servers`.
pub async fn scripted_session(script: &str, mcp_servers: Value) -> ScriptedSession {
    let dir = tempfile::tempdir().unwrap();
    let journal_dir = dir.path().join("journal");
    let script = write_script(dir.path(), script);
    let mut fake = start_fake(&script_args(&script, &journal_dir), &[]).await;
    let session_id = fake.new_session(mcp_servers).await;
    ScriptedSession {
        dir,
        journal_dir,
        fake,
        session_id,
    }
}
