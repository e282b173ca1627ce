//! Taps on the byte streams under the ACP SDK: every complete NDJSON line read from the
//! client is journaled as `AcpIn`, every line written to it as `AcpOut`, at the moment it
//! crosses the pipe. Credentials (MCP header and env values whose names look secret) are
//! redacted in the journal copy only; the SDK sees the bytes untouched.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::journal::JournalEntry;
use crate::journal::writer::JournalWriter;

/// Which way a tapped line went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    In,
    Out,
}

/// Splits a byte stream into lines and journals each complete one.
#[derive(Debug)]
struct LineTap {
    journal: Option<Arc<JournalWriter>>,
    direction: Direction,
    partial: Vec<u8>,
}

impl LineTap {
    fn new(journal: Option<Arc<JournalWriter>>, direction: Direction) -> Self {
        Self {
            journal,
            direction,
            partial: Vec::new(),
        }
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        if self.journal.is_none() {
            return;
        }
        while let Some(newline) = bytes.iter().position(|b| *b == b'\n') {
            self.partial.extend_from_slice(&bytes[..newline]);
            let line = std::mem::take(&mut self.partial);
            self.emit(&line);
            bytes = &bytes[newline + 1..];
        }
        self.partial.extend_from_slice(bytes);
    }

    fn finish(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.emit(&line);
        }
    }

    fn emit(&self, line: &[u8]) {
        let Some(journal) = &self.journal else {
            return;
        };
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches('\r');
        if text.trim().is_empty() {
            return;
        }
        let mut frame =
            serde_json::from_str::<Value>(text).unwrap_or_else(|_| json!({ "unparsed": text }));
        redact_credentials(&mut frame);
        let entry = match self.direction {
            Direction::In => JournalEntry::AcpIn { frame },
            Direction::Out => JournalEntry::AcpOut { frame },
        };
        journal.record(&entry);
    }
}

/// Replaces secret-looking `mcpServers[].headers[].value` and `…env[].value` with
/// their [`redacted`] form, so tokens never land in the journal.
pub fn redact_credentials(frame: &mut Value) {
    let Some(servers) = frame
        .get_mut("params")
        .and_then(|p| p.get_mut("mcpServers"))
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for server in servers {
        for list in ["headers", "env"] {
            let Some(pairs) = server.get_mut(list).and_then(Value::as_array_mut) else {
                continue;
            };
            for pair in pairs {
                let secret = pair
                    .get("name")
                    .and_then(Value::as_str)
                    .is_some_and(looks_secret);
                if !secret {
                    continue;
                }
                if let Some(value) = pair.get_mut("value") {
                    let shown = value.as_str().map(redacted).unwrap_or_default();
                    *value = Value::String(shown);
                }
            }
        }
    }
}

fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "authorization",
        "token",
        "secret",
        "key",
        "cookie",
        "password",
        "credential",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// A credential's journal form: its scheme, then its shape (length, whether it is all
/// hex) and the first 8 hex digits of its SHA-256. The secret itself is never written,
/// but a test can still check a token's format and that turns never share one.
pub fn redacted(value: &str) -> String {
    let (scheme, secret) = match value.split_once(' ') {
        Some((scheme, secret))
            if !scheme.is_empty() && scheme.chars().all(char::is_alphanumeric) =>
        {
            (Some(scheme), secret)
        }
        _ => (None, value),
    };
    let kind = if !secret.is_empty() && secret.bytes().all(|b| b.is_ascii_hexdigit()) {
        "hex"
    } else {
        "text"
    };
    let digest = hex::encode(Sha256::digest(secret.as_bytes()));
    let fingerprint = digest.get(..8).unwrap_or_default();
    let shown = format!(
        "<redacted len={} {kind} fp={fingerprint}>",
        secret.chars().count()
    );
    match scheme {
        Some(scheme) => format!("{scheme} {shown}"),
        None => shown,
    }
}

/// An `AsyncRead` that journals each complete line it yields as `AcpIn`.
#[derive(Debug)]
pub struct TappedReader<R> {
    inner: R,
    tap: LineTap,
}

impl<R> TappedReader<R> {
    /// Wraps `inner`; with no journal it only forwards.
    pub fn new(inner: R, journal: Option<Arc<JournalWriter>>) -> Self {
        Self {
            inner,
            tap: LineTap::new(journal, Direction::In),
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for TappedReader<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let fresh = &buf.filled()[before..];
            if fresh.is_empty() {
                this.tap.finish();
            } else {
                this.tap.feed(fresh);
            }
        }
        polled
    }
}

/// An `AsyncWrite` that journals each complete line written through it as `AcpOut`.
#[derive(Debug)]
pub struct TappedWriter<W> {
    inner: W,
    tap: LineTap,
}

impl<W> TappedWriter<W> {
    /// Wraps `inner`; with no journal it only forwards.
    pub fn new(inner: W, journal: Option<Arc<JournalWriter>>) -> Self {
        Self {
            inner,
            tap: LineTap::new(journal, Direction::Out),
        }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for TappedWriter<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(written)) = polled {
            this.tap.feed(&buf[..written]);
        }
        polled
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        this.tap.finish();
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_bearer_tokens_but_keeps_the_scheme() {
        let mut frame = json!({"method":"session/new","params":{"cwd":"/","mcpServers":[
            {"type":"http","name":"b","url":"u","headers":[
                {"name":"Authorization","value":"Bearer s3cret"},
                {"name":"X-Trace","value":"visible"}]}]}});
        redact_credentials(&mut frame);
        let headers = &frame["params"]["mcpServers"][0]["headers"];
        assert_eq!(
            headers[0]["value"],
            "Bearer <redacted len=6 text fp=1ec1c26b>"
        );
        assert_eq!(headers[1]["value"], "visible");
    }

    #[test]
    fn hex_secrets_are_told_apart_and_schemeless_values_keep_no_scheme() {
        assert_eq!(redacted("ab12"), "<redacted len=4 hex fp=59d93772>");
        assert!(redacted("Bearer ab12").starts_with("Bearer <redacted len=4 hex"));
    }
}
