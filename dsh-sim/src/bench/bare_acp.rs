//! The ACP floors' two ends, on the official SDK and nothing else: [`BareClient`], a
//! client over a child's stdio (tokio's child pipes, as the adapter's) whose notification
//! handler only counts, and [`serve_bench_agent`], the smallest SDK agent (`dsh-sim
//! bench-agent`), which answers `initialize` and every other request with `{}` over its
//! stdio wrapped as unix pipes, as the fake's.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, InitializeRequest, InitializeResponse, NewSessionRequest,
    PromptRequest, RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionId, SessionNotification, SessionUpdate, TextContent,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Agent, ByteStreams, Client, UntypedMessage, on_receive_notification, on_receive_request,
};
use anyhow::{Context, anyhow};
use serde_json::json;
use tokio::sync::oneshot;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// A bare SDK client connected to a child process.
pub struct BareClient {
    cx: ConnectionTo<Agent>,
    child: tokio::process::Child,
    stop: Option<oneshot::Sender<()>>,
    driver: tokio::task::JoinHandle<Result<(), agent_client_protocol::Error>>,
    notifications: Arc<Counter>,
    /// When `spawn` began.
    pub spawned_at: Instant,
}

/// Message chunks seen, and when the first of them arrived.
#[derive(Default)]
struct Counter {
    seen: AtomicU64,
    first: std::sync::Mutex<Option<Instant>>,
}

impl BareClient {
    /// Spawns `program args` and connects to its stdio.
    pub async fn spawn(program: &Path, args: &[&str]) -> anyhow::Result<Self> {
        let spawned_at = Instant::now();
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", program.display()))?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
        let notifications = Arc::new(Counter::default());
        let counted = notifications.clone();
        let (cx_sender, cx_receiver) = oneshot::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let connection = Client
            .v1()
            .name("bench-client")
            .on_receive_notification(
                async move |notification: SessionNotification, _cx| {
                    if !matches!(notification.update, SessionUpdate::AgentMessageChunk(_)) {
                        return Ok(());
                    }
                    if counted.seen.fetch_add(1, Ordering::Relaxed) == 0
                        && let Ok(mut first) = counted.first.lock()
                    {
                        *first = Some(Instant::now());
                    }
                    Ok(())
                },
                on_receive_notification!(),
            )
            .on_receive_request(
                async move |request: RequestPermissionRequest,
                            responder: Responder<RequestPermissionResponse>,
                            _cx| {
                    let allow = request
                        .options
                        .first()
                        .map(|o| o.option_id.clone())
                        .unwrap_or_else(|| "allow".into());
                    responder.respond(RequestPermissionResponse::new(
                        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(allow)),
                    ))
                },
                on_receive_request!(),
            )
            .connect_with(transport, async move |cx| {
                if cx_sender.send(cx).is_err() {
                    return Ok(());
                }
                let _stop_or_gone = stopped.await;
                Ok(())
            });
        let driver = tokio::spawn(connection);
        let cx = cx_receiver
            .await
            .map_err(|_| anyhow!("the bench client did not connect"))?;
        Ok(Self {
            cx,
            child,
            stop: Some(stop),
            driver,
            notifications,
            spawned_at,
        })
    }

    /// Sends `initialize` and waits for the answer.
    pub async fn initialize(&self) -> anyhow::Result<()> {
        self.cx
            .send_request(
                InitializeRequest::new(ProtocolVersion::V1)
                    .client_capabilities(ClientCapabilities::new()),
            )
            .block_task()
            .await
            .map_err(|e| anyhow!("initialize failed: {e}"))?;
        Ok(())
    }

    /// One request and its answer: `bench/echo`, which the bench agent answers `{}`.
    pub async fn round_trip(&self) -> anyhow::Result<Duration> {
        let started = Instant::now();
        self.cx
            .send_request(UntypedMessage::new("bench/echo", json!({}))?)
            .block_task()
            .await
            .map_err(|e| anyhow!("bench/echo failed: {e}"))?;
        Ok(started.elapsed())
    }

    /// Opens a session in `cwd` and prompts it, as the adapter's first tool stream does
    /// (without the MCP server: its requests are timed by the rmcp floor); from
    /// `session/new` to the prompt's answer.
    pub async fn session_and_prompt(&self, cwd: &Path, prompt: &str) -> anyhow::Result<Duration> {
        let started = Instant::now();
        let session = self.new_session(cwd).await?;
        self.prompt(session, prompt).await?;
        Ok(started.elapsed())
    }

    async fn new_session(&self, cwd: &Path) -> anyhow::Result<SessionId> {
        let session = self
            .cx
            .send_request(NewSessionRequest::new(cwd))
            .block_task()
            .await
            .map_err(|e| anyhow!("session/new failed: {e}"))?;
        Ok(session.session_id)
    }

    async fn prompt(&self, session: SessionId, prompt: &str) -> anyhow::Result<()> {
        let text = ContentBlock::Text(TextContent::new(prompt));
        self.cx
            .send_request(PromptRequest::new(session, vec![text]))
            .block_task()
            .await
            .map_err(|e| anyhow!("session/prompt failed: {e}"))?;
        Ok(())
    }

    /// Opens a session in `cwd` and prompts it; returns the chunks' rate: the
    /// notifications received over the time from the first of them to the prompt's answer.
    pub async fn stream_rate(&self, cwd: &Path, prompt: &str) -> anyhow::Result<(u64, Duration)> {
        let session = self.new_session(cwd).await?;
        if let Ok(mut first) = self.notifications.first.lock() {
            *first = None;
        }
        self.notifications.seen.store(0, Ordering::Relaxed);
        self.prompt(session, prompt).await?;
        let done = Instant::now();
        let seen = self.notifications.seen.load(Ordering::Relaxed);
        let first = self
            .notifications
            .first
            .lock()
            .ok()
            .and_then(|f| *f)
            .unwrap_or(done);
        Ok((seen, done.duration_since(first)))
    }

    /// Closes the connection and waits for the child to exit.
    pub async fn close(mut self) -> anyhow::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _gone = stop.send(());
        }
        let _ended = tokio::time::timeout(Duration::from_secs(5), &mut self.driver).await;
        self.driver.abort();
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            self.child.kill().await?;
        }
        Ok(())
    }
}

/// `dsh-sim bench-agent`: serves the smallest SDK agent on stdio until stdin closes.
pub async fn serve_bench_agent() -> anyhow::Result<()> {
    let reader = fake_antigravity::process::stdio_pipes::stdin_reader();
    let writer = fake_antigravity::process::stdio_pipes::stdout_writer();
    Agent
        .v1()
        .name("bench-agent")
        .on_receive_request(
            async move |request: InitializeRequest,
                        responder: Responder<InitializeResponse>,
                        _cx| {
                responder.respond(InitializeResponse::new(request.protocol_version))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |_: UntypedMessage, responder: Responder<serde_json::Value>, _cx| {
                responder.respond(json!({}))
            },
            on_receive_request!(),
        )
        .connect_to(ByteStreams::new(writer.compat_write(), reader.compat()))
        .await
        .map_err(|e| anyhow!("the bench agent's connection failed: {e}"))
}
