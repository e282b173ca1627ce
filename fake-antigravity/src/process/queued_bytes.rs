//! Writing bytes a wrapping writer queued (an injected line, a rewritten frame) to the
//! writer it wraps, before anything new: shared by [`super::stdout_lines`],
//! [`super::version_override`] and [`crate::faults::server_fault_writer`].

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;

/// Writes `queue` to `inner`, draining what was written; `Ready(Ok)` once the queue is
/// empty. A writer that takes nothing is a `WriteZero` error.
pub fn poll_write_queued<W: AsyncWrite + Unpin>(
    inner: &mut W,
    queue: &mut Vec<u8>,
    cx: &mut Context<'_>,
) -> Poll<std::io::Result<()>> {
    while !queue.is_empty() {
        match Pin::new(&mut *inner).poll_write(cx, queue) {
            Poll::Ready(Ok(0)) => return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into())),
            Poll::Ready(Ok(written)) => {
                queue.drain(..written);
            }
            Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
            Poll::Pending => return Poll::Pending,
        }
    }
    Poll::Ready(Ok(()))
}
