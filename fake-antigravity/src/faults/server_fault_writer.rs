//! The server faults of `fake.faults` (types in [`super::server_faults`]) and the planted
//! secret of `fake.planted_secret`, done to the frames the fake writes: [`FaultWriter`]
//! wraps the process's raw stdout, below the journal's tap (the journal shows the frames
//! the fake meant to send; the pipe carries what the fault made of them). It collects each
//! frame whole, then writes the segments the armed fault makes of it, in order, each
//! optionally followed by an act (a pause, a stall, closing stdout, exiting, SIGKILL).
//!
//! Without faults or a secret, [`with_faults`] returns stdout untouched.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWrite;

use crate::faults::server_faults::{ServerFault, ServerFaultKind};
use crate::script::Script;

/// The stall of `stall_then_resume` when the script names no `ms`.
const DEFAULT_STALL_MS: u64 = 300;
/// The pause between the two writes of a split frame.
const SPLIT_PAUSE: Duration = Duration::from_millis(5);
/// The exit status of the `exit` fault.
const EXIT_STATUS: i32 = 3;

/// `stdout` wrapped with the script's faults and secret, if it has any.
pub fn with_faults(
    stdout: Box<dyn AsyncWrite + Send + Unpin>,
    script: &Script,
) -> Box<dyn AsyncWrite + Send + Unpin> {
    if script.faults.is_empty() && script.planted_secret.is_none() {
        return stdout;
    }
    if let Some(secret) = &script.planted_secret {
        eprintln!("E1201 00:00:00.000000 1 main.py:99] upstream credential {secret} rejected");
    }
    Box::new(FaultWriter::new(
        stdout,
        script.faults.clone(),
        script.planted_secret.clone(),
    ))
}

/// What follows a segment once it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Then {
    Nothing,
    Pause(Duration),
    Stall,
    CloseStdout,
    Exit,
    Sigkill,
}

/// Bytes to write, then an act.
#[derive(Debug)]
struct Segment {
    bytes: Vec<u8>,
    then: Then,
}

impl Segment {
    fn line(frame: &[u8]) -> Self {
        let mut bytes = frame.to_vec();
        bytes.push(b'\n');
        Self {
            bytes,
            then: Then::Nothing,
        }
    }

    fn act(then: Then) -> Self {
        Self {
            bytes: Vec::new(),
            then,
        }
    }
}

/// A writer that does the armed faults to whole frames (see the module doc).
pub struct FaultWriter<W> {
    /// `None` once stdout was closed.
    inner: Option<W>,
    /// Faults not struck yet, by frame index.
    armed: VecDeque<ServerFault>,
    secret: Option<String>,
    /// The frame being collected (no newline yet).
    frame: Vec<u8>,
    /// Frames complete so far.
    frames: usize,
    out: VecDeque<Segment>,
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
    stalled: bool,
    /// The newline of a frame whose segments are queued, owed to the caller as written.
    newline_owed: bool,
    /// The session of the newest `session/update` written.
    last_session: Option<String>,
}

impl<W> FaultWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W, mut faults: Vec<ServerFault>, secret: Option<String>) -> Self {
        faults.sort_by_key(|f| f.at_frame);
        Self {
            inner: Some(inner),
            armed: faults.into(),
            secret,
            frame: Vec::new(),
            frames: 0,
            out: VecDeque::new(),
            pause: None,
            stalled: false,
            newline_owed: false,
            last_session: None,
        }
    }

    /// The segments frame number `self.frames` becomes.
    fn segments_of(&mut self, frame: Vec<u8>) -> Vec<Segment> {
        let frame = match &self.secret {
            Some(secret) => plant_in_error(frame, secret),
            None => frame,
        };
        // Only `chunk_after_result` needs the session; other runs skip the parse per frame.
        let needs_session = self
            .armed
            .iter()
            .any(|fault| fault.kind == ServerFaultKind::ChunkAfterResult);
        if needs_session && let Some(session) = session_of_update(&frame) {
            self.last_session = Some(session);
        }
        let due = self
            .armed
            .front()
            .is_some_and(|fault| fault.at_frame <= self.frames);
        let Some(fault) = self.armed.front().cloned().filter(|_| due) else {
            return vec![Segment::line(&frame)];
        };
        let struck = match fault.kind {
            ServerFaultKind::Exit => Some(vec![Segment::act(Then::Exit)]),
            ServerFaultKind::Sigkill => Some(vec![Segment::act(Then::Sigkill)]),
            ServerFaultKind::Stall => Some(vec![Segment::act(Then::Stall)]),
            ServerFaultKind::StallThenResume => Some(vec![
                Segment::act(Then::Pause(Duration::from_millis(
                    fault.ms.unwrap_or(DEFAULT_STALL_MS),
                ))),
                Segment::line(&frame),
            ]),
            ServerFaultKind::GarbageLine => {
                Some(vec![Segment::line(b"garbage"), Segment::line(&frame)])
            }
            ServerFaultKind::TruncatedLine => Some(vec![Segment::line(&frame[..frame.len() / 2])]),
            ServerFaultKind::SplitFrame => {
                let at = fault.at_byte.unwrap_or(1).min(frame.len());
                Some(vec![
                    Segment {
                        bytes: frame[..at].to_vec(),
                        then: Then::Pause(SPLIT_PAUSE),
                    },
                    Segment::line(&frame[at..]),
                ])
            }
            ServerFaultKind::CloseStdout => Some(vec![Segment::act(Then::CloseStdout)]),
            ServerFaultKind::ResponseTwice => {
                is_response(&frame).then(|| vec![Segment::line(&frame), Segment::line(&frame)])
            }
            ServerFaultKind::UnknownIdResponse => Some(vec![
                Segment::line(&frame),
                Segment::line(br#"{"jsonrpc":"2.0","id":987654321,"result":{}}"#),
            ]),
            ServerFaultKind::UnknownSessionNotification => Some(vec![
                Segment::line(&chunk_for("chaos-unknown-session")),
                Segment::line(&frame),
            ]),
            ServerFaultKind::ChunkAfterResult => match &self.last_session {
                Some(session) if is_prompt_result(&frame) => Some(vec![
                    Segment::line(&frame),
                    Segment::line(&chunk_for(session)),
                ]),
                _ => None,
            },
        };
        match struck {
            Some(segments) => {
                self.armed.pop_front();
                segments
            }
            None => vec![Segment::line(&frame)],
        }
    }
}

impl<W: AsyncWrite + Unpin> FaultWriter<W> {
    /// Writes the queued segments and does their acts; `Ready(Ok)` once none is left.
    fn drive(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        loop {
            if let Some(pause) = self.pause.as_mut() {
                std::task::ready!(pause.as_mut().poll(cx));
                self.pause = None;
            }
            if self.stalled {
                // Never woken: the fake writes nothing more.
                return Poll::Pending;
            }
            let Some(segment) = self.out.front_mut() else {
                return Poll::Ready(Ok(()));
            };
            if let Some(inner) = self.inner.as_mut() {
                std::task::ready!(crate::process::queued_bytes::poll_write_queued(
                    inner,
                    &mut segment.bytes,
                    cx
                ))?;
            }
            let then = segment.then;
            self.out.pop_front();
            match then {
                Then::Nothing => {}
                Then::Pause(duration) => {
                    self.pause = Some(Box::pin(tokio::time::sleep(duration)));
                }
                Then::Stall => self.stalled = true,
                Then::CloseStdout => self.close_stdout(),
                Then::Exit => std::process::exit(EXIT_STATUS),
                Then::Sigkill => {
                    // If the kill cannot happen, exiting is the nearest fault.
                    eprintln!(
                        "fake-antigravity: {}",
                        crate::process::abrupt_end::kill_self()
                    );
                    std::process::exit(EXIT_STATUS);
                }
            }
        }
    }

    /// Closes every copy of stdout's write end this process holds: the async writer's and
    /// the system's standard output.
    fn close_stdout(&mut self) {
        self.inner = None;
        if let Err(reason) = crate::process::abrupt_end::close_stdout() {
            eprintln!("fake-antigravity: {reason}");
        }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for FaultWriter<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        loop {
            std::task::ready!(this.drive(cx))?;
            if this.newline_owed {
                this.newline_owed = false;
                return Poll::Ready(Ok(1));
            }
            if this.inner.is_none() {
                return Poll::Ready(Ok(buf.len()));
            }
            match buf.iter().position(|b| *b == b'\n') {
                None => {
                    this.frame.extend_from_slice(buf);
                    return Poll::Ready(Ok(buf.len()));
                }
                Some(0) => {
                    let frame = std::mem::take(&mut this.frame);
                    let segments = this.segments_of(frame);
                    this.frames += 1;
                    this.out.extend(segments);
                    this.newline_owed = true;
                }
                Some(end) => {
                    this.frame.extend_from_slice(&buf[..end]);
                    return Poll::Ready(Ok(end));
                }
            }
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        std::task::ready!(this.drive(cx))?;
        match this.inner.as_mut() {
            Some(inner) => Pin::new(inner).poll_flush(cx),
            None => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        std::task::ready!(this.drive(cx))?;
        match this.inner.as_mut() {
            Some(inner) => Pin::new(inner).poll_shutdown(cx),
            None => Poll::Ready(Ok(())),
        }
    }
}

/// A JSON-RPC response (an id and a result or an error, no method).
fn is_response(frame: &[u8]) -> bool {
    serde_json::from_slice::<Value>(frame).is_ok_and(|v| {
        v.get("id").is_some()
            && v.get("method").is_none()
            && (v.get("result").is_some() || v.get("error").is_some())
    })
}

/// A `session/prompt` result (a response carrying a `stopReason`).
fn is_prompt_result(frame: &[u8]) -> bool {
    serde_json::from_slice::<Value>(frame)
        .is_ok_and(|v| v.pointer("/result/stopReason").is_some() && v.get("method").is_none())
}

/// The session of a `session/update` notification.
fn session_of_update(frame: &[u8]) -> Option<String> {
    // Cheap test first: most frames are not updates.
    if !frame.windows(14).any(|w| w == b"session/update") {
        return None;
    }
    let value = serde_json::from_slice::<Value>(frame).ok()?;
    value
        .pointer("/params/sessionId")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// An `agent_message_chunk` for `session`.
fn chunk_for(session: &str) -> Vec<u8> {
    serde_json::json!({
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": session,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "a chunk no prompt is waiting for"}
            }
        }
    })
    .to_string()
    .into_bytes()
}

/// `frame` with `secret` planted in its JSON-RPC error's message and data, if it is one.
fn plant_in_error(frame: Vec<u8>, secret: &str) -> Vec<u8> {
    if !frame.windows(8).any(|w| w == b"\"error\":") {
        return frame;
    }
    let Ok(mut value) = serde_json::from_slice::<Value>(&frame) else {
        return frame;
    };
    let Some(error) = value.get_mut("error").and_then(Value::as_object_mut) else {
        return frame;
    };
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    error.insert(
        "message".to_owned(),
        Value::String(format!("{message} (token {secret})")),
    );
    error.insert(
        "data".to_owned(),
        serde_json::json!({ "upstream": format!("credential {secret} rejected") }),
    );
    serde_json::to_vec(&value).unwrap_or(frame)
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;

    fn fault(kind: ServerFaultKind, at_frame: usize) -> ServerFault {
        ServerFault {
            at_frame,
            kind,
            ms: None,
            at_byte: None,
        }
    }

    async fn written(faults: Vec<ServerFault>, frames: &[&str]) -> std::io::Result<String> {
        let mut out = Vec::new();
        {
            let mut writer = FaultWriter::new(&mut out, faults, Some("S3CR3T".to_owned()));
            for frame in frames {
                writer.write_all(frame.as_bytes()).await?;
                writer.write_all(b"\n").await?;
                writer.flush().await?;
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    #[tokio::test]
    async fn frames_pass_untouched_before_the_fault_and_after_it() -> std::io::Result<()> {
        let out = written(
            vec![fault(ServerFaultKind::GarbageLine, 1)],
            &["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"],
        )
        .await?;
        assert_eq!(out, "{\"a\":1}\ngarbage\n{\"b\":2}\n{\"c\":3}\n");
        Ok(())
    }

    #[tokio::test]
    async fn a_response_twice_waits_for_a_response() -> std::io::Result<()> {
        let out = written(
            vec![fault(ServerFaultKind::ResponseTwice, 0)],
            &["{\"method\":\"x\"}", "{\"id\":1,\"result\":{}}"],
        )
        .await?;
        assert_eq!(
            out,
            "{\"method\":\"x\"}\n{\"id\":1,\"result\":{}}\n{\"id\":1,\"result\":{}}\n"
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_truncated_line_replaces_its_frame() -> std::io::Result<()> {
        let out = written(
            vec![fault(ServerFaultKind::TruncatedLine, 0)],
            &["{\"id\":1,\"result\":{}}"],
        )
        .await?;
        assert_eq!(out, "{\"id\":1,\"r\n");
        Ok(())
    }

    #[tokio::test]
    async fn a_split_frame_arrives_whole() -> std::io::Result<()> {
        let mut split = fault(ServerFaultKind::SplitFrame, 0);
        split.at_byte = Some(3);
        let out = written(vec![split], &["{\"id\":1}"]).await?;
        assert_eq!(out, "{\"id\":1}\n");
        Ok(())
    }

    #[tokio::test]
    async fn the_secret_is_planted_in_every_error() -> std::io::Result<()> {
        let out = written(
            Vec::new(),
            &["{\"id\":1,\"error\":{\"code\":-32603,\"message\":\"boom\"}}"],
        )
        .await?;
        assert!(out.contains("boom (token S3CR3T)"), "{out}");
        Ok(())
    }

    #[tokio::test]
    async fn a_chunk_follows_the_prompt_result_of_the_last_session() -> std::io::Result<()> {
        let out = written(
            vec![fault(ServerFaultKind::ChunkAfterResult, 0)],
            &[
                "{\"method\":\"session/update\",\"params\":{\"sessionId\":\"s1\"}}",
                "{\"id\":2,\"result\":{\"stopReason\":\"end_turn\"}}",
            ],
        )
        .await?;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert!(lines[2].contains("\"sessionId\":\"s1\""), "{out}");
        Ok(())
    }
}
