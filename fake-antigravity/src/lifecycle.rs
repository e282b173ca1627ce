//! Process lifecycle switches (the script's `lifecycle:` key), so scenarios can prove how a
//! client treats a server process over its life: exiting on its own while idle, after N
//! sessions were prompted or after N ms without traffic (a pooled process that died while
//! idle). The start-up delay is `process.startup_delay_ms` (see `script::ProcessScript`). The watch taps the stdio streams to know when
//! the process is idle: no client request left unanswered.

use std::collections::{HashMap, HashSet};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Instant;

/// The `lifecycle:` key of a script; every switch is off by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LifecycleScript {
    /// Exit (journaling `Exited`) once this many sessions have had a prompt answered and
    /// no request is left unanswered.
    #[serde(default)]
    pub exit_after_sessions: Option<usize>,
    /// Exit once this many milliseconds passed with no request unanswered and no frame
    /// either way.
    #[serde(default)]
    pub exit_after_ms: Option<u64>,
}

#[derive(Debug)]
struct Traffic {
    /// Ids of client requests not answered yet.
    open: HashSet<String>,
    /// `session/prompt` request ids and their sessions.
    prompts: HashMap<String, String>,
    /// Sessions whose prompt was answered.
    prompted: HashSet<String>,
    last_frame: Instant,
}

/// What the lifecycle switches watch: the traffic on the process's stdio.
#[derive(Debug)]
pub struct LifecycleWatch {
    script: LifecycleScript,
    traffic: Mutex<Traffic>,
    changed: Notify,
}

impl LifecycleWatch {
    /// A watch for `script`.
    pub fn new(script: LifecycleScript) -> Arc<Self> {
        Arc::new(Self {
            script,
            traffic: Mutex::new(Traffic {
                open: HashSet::new(),
                prompts: HashMap::new(),
                prompted: HashSet::new(),
                last_frame: Instant::now(),
            }),
            changed: Notify::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Traffic> {
        match self.traffic.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn on_line(&self, line: &[u8], from_client: bool) {
        let Ok(frame) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let id = frame.get("id").map(Value::to_string);
        let method = frame.get("method").and_then(Value::as_str);
        let mut traffic = self.lock();
        traffic.last_frame = Instant::now();
        match (from_client, id, method) {
            (true, Some(id), Some(method)) => {
                if method == "session/prompt"
                    && let Some(session) =
                        frame.pointer("/params/sessionId").and_then(Value::as_str)
                {
                    traffic.prompts.insert(id.clone(), session.to_owned());
                }
                traffic.open.insert(id);
            }
            (false, Some(id), None) => {
                traffic.open.remove(&id);
                if let Some(session) = traffic.prompts.remove(&id) {
                    traffic.prompted.insert(session);
                }
            }
            _ => {}
        }
        drop(traffic);
        self.changed.notify_one();
    }

    /// Resolves with the reason once a switch says the process exits; never when none is
    /// set.
    pub async fn exit_due(&self) -> String {
        if self.script.exit_after_sessions.is_none() && self.script.exit_after_ms.is_none() {
            return std::future::pending().await;
        }
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let (idle, prompted, last) = {
                let traffic = self.lock();
                (
                    traffic.open.is_empty(),
                    traffic.prompted.len(),
                    traffic.last_frame,
                )
            };
            if idle
                && let Some(n) = self.script.exit_after_sessions
                && prompted >= n
            {
                return format!("lifecycle: exit after {n} session(s)");
            }
            let deadline = match (idle, self.script.exit_after_ms) {
                (true, Some(ms)) => {
                    let at = last + Duration::from_millis(ms);
                    if at <= Instant::now() {
                        return format!("lifecycle: exit after {ms} ms idle");
                    }
                    Some(at)
                }
                _ => None,
            };
            match deadline {
                Some(at) => {
                    tokio::select! {
                        () = &mut notified => {}
                        () = tokio::time::sleep_until(at) => {}
                    }
                }
                None => notified.await,
            }
        }
    }
}

/// A stream whose complete lines the watch sees.
pub struct Watched<T> {
    inner: T,
    watch: Arc<LifecycleWatch>,
    from_client: bool,
    partial: Vec<u8>,
}

impl<T> Watched<T> {
    /// Watches what the client sends on `inner`.
    pub fn client_side(inner: T, watch: Arc<LifecycleWatch>) -> Self {
        Self::new(inner, watch, true)
    }

    /// Watches what the fake sends on `inner`.
    pub fn server_side(inner: T, watch: Arc<LifecycleWatch>) -> Self {
        Self::new(inner, watch, false)
    }

    fn new(inner: T, watch: Arc<LifecycleWatch>, from_client: bool) -> Self {
        Self {
            inner,
            watch,
            from_client,
            partial: Vec::new(),
        }
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(newline) = bytes.iter().position(|b| *b == b'\n') {
            self.partial.extend_from_slice(&bytes[..newline]);
            let line = std::mem::take(&mut self.partial);
            self.watch.on_line(&line, self.from_client);
            bytes = &bytes[newline + 1..];
        }
        self.partial.extend_from_slice(bytes);
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let read = buf.filled()[before..].to_vec();
            self.feed(&read);
        }
        polled
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for Watched<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(written)) = polled {
            self.feed(&buf[..written]);
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;

    use super::*;

    /// Far beyond every delay these tests configure.
    const BOUND: Duration = Duration::from_secs(10);

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn prompt_request(watch: &LifecycleWatch) {
        let line = br#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#;
        watch.on_line(line, true);
    }

    fn prompt_answer(watch: &LifecycleWatch) {
        let line = br#"{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}"#;
        watch.on_line(line, false);
    }

    #[tokio::test]
    async fn no_switch_never_exits() {
        let watch = LifecycleWatch::new(LifecycleScript::default());
        prompt_request(&watch);
        prompt_answer(&watch);
        assert!(watch.exit_due().now_or_never().is_none());
    }

    #[tokio::test]
    async fn exits_after_its_sessions_once_idle() -> TestResult {
        let watch = LifecycleWatch::new(LifecycleScript {
            exit_after_sessions: Some(1),
            ..LifecycleScript::default()
        });
        prompt_request(&watch);
        // The prompt is still running: not idle, no exit.
        assert!(watch.exit_due().now_or_never().is_none());
        prompt_answer(&watch);
        let reason = tokio::time::timeout(BOUND, watch.exit_due()).await?;
        assert_eq!(reason, "lifecycle: exit after 1 session(s)");
        Ok(())
    }

    #[tokio::test]
    async fn exits_after_a_quiet_delay_but_not_while_a_request_is_open() -> TestResult {
        let watch = LifecycleWatch::new(LifecycleScript {
            exit_after_ms: Some(20),
            ..LifecycleScript::default()
        });
        prompt_request(&watch);
        let waiting = watch.exit_due();
        tokio::pin!(waiting);
        // A request is open: the delay does not run, however long it is awaited.
        let open = tokio::time::timeout(Duration::from_millis(100), &mut waiting).await;
        assert!(open.is_err(), "exited with a request open");
        prompt_answer(&watch);
        let reason = tokio::time::timeout(BOUND, waiting).await?;
        assert_eq!(reason, "lifecycle: exit after 20 ms idle");
        Ok(())
    }
}
