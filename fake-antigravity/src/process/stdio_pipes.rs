//! The process's stdin/stdout as tokio streams. When fd 0/1 are pipes they are wrapped as
//! tokio unix pipes (non-blocking, no blocking-pool hop per write: ~5× the frame rate of
//! `tokio::io::stdout()`, see the README's benchmark floors); otherwise (a tty, a
//! file, a socket) the fake falls back to `tokio::io::stdin()` / `stdout()`.
//!
//! Call these inside a tokio runtime.

use std::os::fd::AsFd;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// stdin as an async reader.
pub fn stdin_reader() -> Box<dyn AsyncRead + Send + Unpin> {
    let piped = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Receiver::from_owned_fd);
    match piped {
        Ok(receiver) => Box::new(receiver),
        Err(_) => Box::new(tokio::io::stdin()),
    }
}

/// stdout as an async writer.
pub fn stdout_writer() -> Box<dyn AsyncWrite + Send + Unpin> {
    let piped = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Sender::from_owned_fd);
    match piped {
        Ok(sender) => Box::new(sender),
        Err(_) => Box::new(tokio::io::stdout()),
    }
}
