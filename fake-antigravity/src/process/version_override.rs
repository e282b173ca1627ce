//! [`VersionOverride`]: plays a server of another ACP version. The SDK the fake is built on
//! always answers `initialize` with the version it negotiated (1), so the override sits
//! under it, on the bytes: it holds each outgoing line until its newline and, in the
//! `initialize` answer (a result with `protocolVersion` and `agentCapabilities`), replaces
//! `protocolVersion` with the scripted one (`initialize.protocol_version`, C05). Every
//! other line passes unchanged.

use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;
use tokio::io::AsyncWrite;

/// A writer that rewrites the `initialize` answer's `protocolVersion`.
#[derive(Debug)]
pub struct VersionOverride<W> {
    inner: W,
    version: Option<u64>,
    /// The line being written, not yet complete.
    line: Vec<u8>,
    /// Complete lines (rewritten where due), not yet written to `inner`.
    out: Vec<u8>,
}

impl<W> VersionOverride<W> {
    /// Wraps `inner`; with `version` `None` (or 1) it rewrites nothing.
    pub fn new(inner: W, version: Option<u64>) -> Self {
        Self {
            inner,
            version: version.filter(|v| *v != 1),
            line: Vec::new(),
            out: Vec::new(),
        }
    }

    fn take_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        let rewritten = self.version.and_then(|version| {
            let mut frame: Value = serde_json::from_slice(&line).ok()?;
            let result = frame.get_mut("result")?.as_object_mut()?;
            if !result.contains_key("protocolVersion") || !result.contains_key("agentCapabilities")
            {
                return None;
            }
            result.insert("protocolVersion".into(), Value::from(version));
            serde_json::to_vec(&frame).ok()
        });
        self.out.extend(rewritten.unwrap_or(line));
        self.out.push(b'\n');
    }
}

impl<W: AsyncWrite + Unpin> VersionOverride<W> {
    /// Writes what is queued; `Ready(Ok)` once nothing is left.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        super::queued_bytes::poll_write_queued(&mut self.inner, &mut self.out, cx)
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for VersionOverride<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        if this.version.is_none() {
            return Pin::new(&mut this.inner).poll_write(cx, buf);
        }
        // Earlier lines go out first; new bytes are taken only once they have.
        match this.poll_drain(cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
            Poll::Pending => return Poll::Pending,
        }
        let mut rest = buf;
        while let Some(newline) = rest.iter().position(|b| *b == b'\n') {
            this.line.extend_from_slice(&rest[..newline]);
            this.take_line();
            rest = &rest[newline + 1..];
        }
        this.line.extend_from_slice(rest);
        // What can go out now does; the rest goes at the next write or flush.
        if let Poll::Ready(Err(error)) = this.poll_drain(cx) {
            return Poll::Ready(Err(error));
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        match this.poll_drain(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut this.inner).poll_flush(cx),
            other => other,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        match this.poll_drain(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut this.inner).poll_shutdown(cx),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;

    #[tokio::test]
    async fn only_the_initialize_answer_is_rewritten() -> std::io::Result<()> {
        let mut written = Vec::new();
        {
            let mut writer = VersionOverride::new(&mut written, Some(2));
            writer
                .write_all(b"{\"id\":0,\"result\":{\"protocolVersion\":1,\"agentCapabilities\":{}}}\n{\"id\":1,\"result\":{\"protocolVersion\":1}}\n")
                .await?;
            writer.flush().await?;
        }
        let text = String::from_utf8_lossy(&written);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("\"protocolVersion\":2"), "{text}");
        assert!(lines[1].contains("\"protocolVersion\":1"), "{text}");
        Ok(())
    }

    #[tokio::test]
    async fn version_1_passes_everything_through() -> std::io::Result<()> {
        let mut written = Vec::new();
        let frame = b"{\"id\":0,\"result\":{\"protocolVersion\":1,\"agentCapabilities\":{}}}\n";
        VersionOverride::new(&mut written, Some(1))
            .write_all(frame)
            .await?;
        assert_eq!(written, frame);
        Ok(())
    }
}
