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
        // Only the envelope is read: a prompt's text is skipped, never built into a value.
        let Ok(frame) = serde_json::from_slice::<Envelope<'_>>(line) else {
            return;
        };
        // The id as a value prints it, so that a request and its answer agree however
        // each side wrote it.
        let id = frame
            .id
            .and_then(|id| serde_json::from_str::<serde_json::Value>(id.get()).ok())
            .map(|id| id.to_string());
        let mut traffic = self.lock();
        traffic.last_frame = Instant::now();
        match (from_client, id, frame.method.as_deref()) {
            (true, Some(id), Some(method)) => {
                if method == "session/prompt"
                    && let Some(session) = frame.params.and_then(|p| p.session_id)
                {
                    traffic.prompts.insert(id.clone(), session.into_owned());
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

/// What the watch reads of a JSON-RPC frame.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<EnvelopeParams<'a>>,
}

/// What the watch reads of a frame's parameters.
#[derive(Deserialize)]
struct EnvelopeParams<'a> {
    #[serde(rename = "sessionId", borrow)]
    session_id: Option<std::borrow::Cow<'a, str>>,
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

    fn feed(&mut self, bytes: &[u8]) {
        feed_lines(&mut self.partial, bytes, &self.watch, self.from_client);
    }
}

/// Hands `watch` every line `bytes` completes (the first joined to `partial`, the bytes
/// of an unfinished line before it); keeps the unfinished rest in `partial`.
fn feed_lines(partial: &mut Vec<u8>, mut bytes: &[u8], watch: &LifecycleWatch, from_client: bool) {
    while let Some(newline) = memchr::memchr(b'\n', bytes) {
        let (line, rest) = bytes.split_at(newline);
        if partial.is_empty() {
            watch.on_line(line, from_client);
        } else {
            partial.extend_from_slice(line);
            watch.on_line(partial, from_client);
            partial.clear();
        }
        bytes = rest.get(1..).unwrap_or_default();
    }
    partial.extend_from_slice(bytes);
}

impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let read = buf.filled().get(before..).unwrap_or_default();
            feed_lines(&mut this.partial, read, &this.watch, this.from_client);
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
