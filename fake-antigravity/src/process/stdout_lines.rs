//! Raw lines on stdout between ACP frames, as 1.1.1 printed its sign-in URL line there,
//! interleaved with JSON-RPC (docs/antigravity-1.3.0.md §5). [`StdoutLines`] queues a line;
//! [`LineInjector`] wraps the stdout writer and writes queued lines only at a frame
//! boundary (after a newline), right before the next bytes the SDK writes, so a line never
//! lands inside a frame.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;

/// The queue of raw lines to print on stdout.
#[derive(Debug, Clone, Default)]
pub struct StdoutLines {
    pending: Arc<Mutex<Vec<u8>>>,
}

impl StdoutLines {
    /// Queues `line` (a newline is added).
    pub fn push(&self, line: &str) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.extend_from_slice(line.as_bytes());
            pending.push(b'\n');
        }
    }
}

/// A writer that puts queued lines between the frames written through it.
#[derive(Debug)]
pub struct LineInjector<W> {
    inner: W,
    lines: StdoutLines,
    /// Bytes of queued lines taken for writing, not yet written.
    writing: Vec<u8>,
    at_boundary: bool,
}

impl<W> LineInjector<W> {
    /// Wraps `inner`, taking lines from `lines`.
    pub fn new(inner: W, lines: StdoutLines) -> Self {
        Self {
            inner,
            lines,
            writing: Vec::new(),
            at_boundary: true,
        }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for LineInjector<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        if this.at_boundary
            && this.writing.is_empty()
            && let Ok(mut pending) = this.lines.pending.lock()
        {
            this.writing = std::mem::take(&mut *pending);
        }
        std::task::ready!(super::queued_bytes::poll_write_queued(
            &mut this.inner,
            &mut this.writing,
            cx
        ))?;
        match Pin::new(&mut this.inner).poll_write(cx, buf) {
            Poll::Ready(Ok(written)) => {
                if written > 0 {
                    this.at_boundary = buf[written - 1] == b'\n';
                }
                Poll::Ready(Ok(written))
            }
            other => other,
        }
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
    use tokio::io::AsyncWriteExt;

    use super::*;

    #[tokio::test]
    async fn lines_go_between_frames_never_inside_one() -> std::io::Result<()> {
        let lines = StdoutLines::default();
        let mut out = LineInjector::new(Vec::new(), lines.clone());
        out.write_all(b"{\"a\":").await?;
        lines.push("Open the following link");
        out.write_all(b"1}\n").await?;
        out.write_all(b"{\"b\":2}\n").await?;
        assert_eq!(
            String::from_utf8_lossy(&out.inner),
            "{\"a\":1}\nOpen the following link\n{\"b\":2}\n"
        );
        Ok(())
    }
}
