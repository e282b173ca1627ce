//! The process's stdin/stdout as tokio streams. On Unix, when fd 0/1 are pipes they are
//! wrapped as tokio unix pipes (non-blocking, no blocking-pool hop per write: ~5× the
//! frame rate of `tokio::io::stdout()`, see the README's benchmark floors); otherwise (a
//! tty, a file, a socket), and on Windows, the fake uses `tokio::io::stdin()` /
//! `stdout()`.
//!
//! Call these inside a tokio runtime.

use tokio::io::{AsyncRead, AsyncWrite};

/// stdin as an async reader.
pub fn stdin_reader() -> Box<dyn AsyncRead + Send + Unpin> {
    #[cfg(unix)]
    if let Ok(receiver) = unix::stdin_pipe() {
        return Box::new(receiver);
    }
    Box::new(tokio::io::stdin())
}

/// stdout as an async writer.
pub fn stdout_writer() -> Box<dyn AsyncWrite + Send + Unpin> {
    #[cfg(unix)]
    if let Ok(sender) = unix::stdout_pipe() {
        return Box::new(sender);
    }
    Box::new(tokio::io::stdout())
}

#[cfg(unix)]
mod unix {
    use std::os::fd::AsFd;

    use tokio::net::unix::pipe;

    pub(super) fn stdin_pipe() -> std::io::Result<pipe::Receiver> {
        std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .and_then(pipe::Receiver::from_owned_fd)
    }

    pub(super) fn stdout_pipe() -> std::io::Result<pipe::Sender> {
        std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .and_then(pipe::Sender::from_owned_fd)
    }
}
