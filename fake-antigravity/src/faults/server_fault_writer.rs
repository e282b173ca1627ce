//! The server faults of `fake.faults` (types in [`super::server_faults`]) and the planted
//! secret of `fake.planted_secret`, done to the frames the fake writes: [`FaultWriter`]
//! wraps the process's raw stdout, below the journal's tap (the journal shows the frames
//! the fake meant to send; the pipe carries what the fault made of them). It collects each
//! frame whole, then writes the segments the armed fault makes of it, in order, each
//! optionally followed by an act (a pause, a stall, closing stdout, exiting, SIGKILL).
//!
//! Each fault that strikes is journaled (`ServerFaultApplied`: its kind, its frame, what it
//! did) the moment the writer decides what the frame becomes, before any of the frame's
//! bytes or its act: a fault that ends the process (`exit`, `sigkill`) is on disk first,
//! since the journal writes each line with one `write`. A fault never due, or due but
//! still waiting for a frame of its shape, journals nothing.
//!
//! Without faults or a secret, [`with_faults`] returns stdout untouched.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWrite;

use crate::faults::server_faults::{ServerFault, ServerFaultKind};
use crate::journal::JournalEntry;
use crate::journal::writer::JournalWriter;
use crate::script::Script;

/// The stall of `stall_then_resume` when the script names no `ms`.
const DEFAULT_STALL_MS: u64 = 300;
/// The pause between the two writes of a split frame.
const SPLIT_PAUSE: Duration = Duration::from_millis(5);
/// The exit status of the `exit` fault.
const EXIT_STATUS: i32 = 3;
/// The session of `unknown_session_notification`'s chunk.
const UNKNOWN_SESSION: &str = "chaos-unknown-session";

/// `stdout` wrapped with the script's faults and secret, if it has any; each fault that
/// strikes is journaled into `journal`.
pub fn with_faults(
    stdout: Box<dyn AsyncWrite + Send + Unpin>,
    script: &Script,
    journal: Option<Arc<JournalWriter>>,
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
        journal,
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
    /// Where each fault that strikes is journaled.
    journal: Option<Arc<JournalWriter>>,
}

impl<W> FaultWriter<W> {
    /// Wraps `inner`; each fault that strikes is journaled into `journal`.
    pub fn new(
        inner: W,
        mut faults: Vec<ServerFault>,
        secret: Option<String>,
        journal: Option<Arc<JournalWriter>>,
    ) -> Self {
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
            journal,
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
        let Some((segments, effect)) = self.strike(&fault, &frame) else {
            return vec![Segment::line(&frame)];
        };
        self.armed.pop_front();
        if let Some(journal) = &self.journal {
            journal.record(&JournalEntry::ServerFaultApplied {
                fault: fault.kind.name().to_owned(),
                at_frame: fault.at_frame,
                frame: self.frames,
                effect,
            });
        }
        segments
    }

    /// What `fault`, due, makes of `frame` and what that does, in a few words; `None` when
    /// the frame is not of the shape the fault waits for.
    fn strike(&self, fault: &ServerFault, frame: &[u8]) -> Option<(Vec<Segment>, String)> {
        Some(match fault.kind {
            ServerFaultKind::Exit => (
                vec![Segment::act(Then::Exit)],
                format!("exited with status {EXIT_STATUS} instead of writing the frame"),
            ),
            ServerFaultKind::Sigkill => (
                vec![Segment::act(Then::Sigkill)],
                "sent itself SIGKILL instead of writing the frame".to_owned(),
            ),
            ServerFaultKind::Stall => (
                vec![Segment::act(Then::Stall)],
                "stopped writing, for good, instead of writing the frame".to_owned(),
            ),
            ServerFaultKind::StallThenResume => {
                let ms = fault.ms.unwrap_or(DEFAULT_STALL_MS);
                (
                    vec![
                        Segment::act(Then::Pause(Duration::from_millis(ms))),
                        Segment::line(frame),
                    ],
                    format!("wrote nothing for {ms} ms, then the frame"),
                )
            }
            ServerFaultKind::GarbageLine => (
                vec![Segment::line(b"garbage"), Segment::line(frame)],
                "wrote the line `garbage` before the frame".to_owned(),
            ),
            ServerFaultKind::TruncatedLine => {
                let half = frame.len() / 2;
                (
                    vec![Segment::line(&frame[..half])],
                    format!(
                        "wrote the first {half} of the frame's {} bytes instead of it",
                        frame.len()
                    ),
                )
            }
            ServerFaultKind::SplitFrame => {
                let at = fault.at_byte.unwrap_or(1).min(frame.len());
                (
                    vec![
                        Segment {
                            bytes: frame[..at].to_vec(),
                            then: Then::Pause(SPLIT_PAUSE),
                        },
                        Segment::line(&frame[at..]),
                    ],
                    format!(
                        "wrote the frame in two writes split at byte {at}, {} ms apart",
                        SPLIT_PAUSE.as_millis()
                    ),
                )
            }
            ServerFaultKind::CloseStdout => (
                vec![Segment::act(Then::CloseStdout)],
                "closed stdout instead of writing the frame".to_owned(),
            ),
            ServerFaultKind::ResponseTwice => {
                if !is_response(frame) {
                    return None;
                }
                (
                    vec![Segment::line(frame), Segment::line(frame)],
                    "wrote the response twice".to_owned(),
                )
            }
            ServerFaultKind::UnknownIdResponse => (
                vec![
                    Segment::line(frame),
                    Segment::line(br#"{"jsonrpc":"2.0","id":987654321,"result":{}}"#),
                ],
                "wrote a response to the unsent id 987654321 after the frame".to_owned(),
            ),
            ServerFaultKind::UnknownSessionNotification => (
                vec![
                    Segment::line(&chunk_for(UNKNOWN_SESSION)),
                    Segment::line(frame),
                ],
                format!("wrote a chunk for the unknown session {UNKNOWN_SESSION} before the frame"),
            ),
            ServerFaultKind::ChunkAfterResult => match &self.last_session {
                Some(session) if is_prompt_result(frame) => (
                    vec![Segment::line(frame), Segment::line(&chunk_for(session))],
                    format!("wrote a chunk for session {session} after the prompt's result"),
                ),
                _ => return None,
            },
        })
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
        Ok(journaled(faults, frames).await?.0)
    }

    /// What the writer wrote, and the `ServerFaultApplied` entries it journaled.
    async fn journaled(
        faults: Vec<ServerFault>,
        frames: &[&str],
    ) -> std::io::Result<(String, Vec<JournalEntry>)> {
        let dir = tempfile::tempdir()?;
        let journal = Arc::new(
            JournalWriter::create_in(dir.path())
                .map_err(|e| std::io::Error::other(e.to_string()))?,
        );
        let mut out = Vec::new();
        {
            let mut writer = FaultWriter::new(
                &mut out,
                faults,
                Some("S3CR3T".to_owned()),
                Some(journal.clone()),
            );
            for frame in frames {
                writer.write_all(frame.as_bytes()).await?;
                writer.write_all(b"\n").await?;
                writer.flush().await?;
            }
        }
        // Closed first: Windows removes no folder holding an open file.
        drop(journal);
        let entries = crate::journal::read_dir(dir.path())?
            .into_iter()
            .flatten()
            .collect();
        Ok((String::from_utf8_lossy(&out).into_owned(), entries))
    }

    fn applied(fault: &str, at_frame: usize, frame: usize, effect: &str) -> JournalEntry {
        JournalEntry::ServerFaultApplied {
            fault: fault.to_owned(),
            at_frame,
            frame,
            effect: effect.to_owned(),
        }
    }

    #[tokio::test]
    async fn a_fault_never_due_journals_nothing() -> std::io::Result<()> {
        let (out, entries) = journaled(
            vec![fault(ServerFaultKind::Sigkill, 2)],
            &["{\"a\":1}", "{\"b\":2}"],
        )
        .await?;
        assert_eq!(out, "{\"a\":1}\n{\"b\":2}\n");
        assert_eq!(entries, Vec::new());
        Ok(())
    }

    #[tokio::test]
    async fn a_fault_that_strikes_journals_its_frame_and_effect_once() -> std::io::Result<()> {
        let (_, entries) = journaled(
            vec![fault(ServerFaultKind::GarbageLine, 1)],
            &["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"],
        )
        .await?;
        assert_eq!(
            entries,
            vec![applied(
                "garbage_line",
                1,
                1,
                "wrote the line `garbage` before the frame"
            )]
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_response_twice_journals_only_when_a_response_comes() -> std::io::Result<()> {
        let notification = "{\"method\":\"x\"}";
        let (_, before) = journaled(
            vec![fault(ServerFaultKind::ResponseTwice, 0)],
            &[notification, notification],
        )
        .await?;
        assert_eq!(before, Vec::new());
        let (_, entries) = journaled(
            vec![fault(ServerFaultKind::ResponseTwice, 0)],
            &[notification, "{\"id\":1,\"result\":{}}"],
        )
        .await?;
        assert_eq!(
            entries,
            vec![applied("response_twice", 0, 1, "wrote the response twice")]
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_truncated_line_journals_how_much_was_written() -> std::io::Result<()> {
        let (_, entries) = journaled(
            vec![fault(ServerFaultKind::TruncatedLine, 0)],
            &["{\"id\":1,\"result\":{}}"],
        )
        .await?;
        assert_eq!(
            entries,
            vec![applied(
                "truncated_line",
                0,
                0,
                "wrote the first 10 of the frame's 20 bytes instead of it"
            )]
        );
        Ok(())
    }

    #[tokio::test]
    async fn two_faults_journal_in_the_order_they_strike() -> std::io::Result<()> {
        let mut split = fault(ServerFaultKind::SplitFrame, 2);
        split.at_byte = Some(3);
        let (_, entries) = journaled(
            vec![split, fault(ServerFaultKind::UnknownIdResponse, 0)],
            &["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"],
        )
        .await?;
        assert_eq!(
            entries,
            vec![
                applied(
                    "unknown_id_response",
                    0,
                    0,
                    "wrote a response to the unsent id 987654321 after the frame"
                ),
                applied(
                    "split_frame",
                    2,
                    2,
                    "wrote the frame in two writes split at byte 3, 5 ms apart"
                ),
            ]
        );
        Ok(())
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
