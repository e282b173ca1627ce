//! `ManagedProcess`: the server subprocess. It leads its own process tree (a process
//! group on Unix, a Job Object that kills on close on Windows, both through
//! `process-wrap`), runs confined by the kernel as its launch line's plan says
//! (`confine`), gets a private `TMPDIR` inside its scratch root, its stdin and stdout
//! carry ACP, its stderr is kept as a bounded tail that is never logged (only
//! `antigravity-acp-dsh login` reads one line of it, the sign-in URL the server prints, to
//! show on the user's own terminal: [`ManagedProcess::stderr_line_after`]), and its shutdown
//! ends the whole tree (launchers and helpers included), not just the parent. No signal
//! but the final kill is ever sent: stopping is "close stdin, wait the grace, kill the
//! tree" on every system.

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use tokio::io::AsyncReadExt;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::confine::{Enforcement, Prepared};
use super::scratch::ensure_private_dir;
use super::source::LaunchLine;
use crate::error::AdapterError;

/// The private temp directory inside a process's scratch root (its `TMPDIR`).
const TEMP_DIR: &str = "tmp";

/// The temp variables pointed at it (`TEMP` and `TMP` only when the host set them).
const TEMP_VARIABLES: [&str; 3] = ["TMPDIR", "TEMP", "TMP"];

/// How much of the server's stderr is kept.
const STDERR_TAIL_BYTES: usize = 64 * 1024;

/// The last bytes the server wrote on stderr. Kept for diagnostics; never logged.
#[derive(Debug, Default)]
struct StderrTail {
    bytes: VecDeque<u8>,
}

impl StderrTail {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend(chunk);
        let excess = self.bytes.len().saturating_sub(STDERR_TAIL_BYTES);
        self.bytes.drain(..excess);
    }
}

/// A running server process and what it owns.
#[derive(Debug)]
pub(crate) struct ManagedProcess {
    /// The server, wrapped so that a kill reaches its whole tree.
    child: Box<dyn ChildWrapper>,
    stderr_tail: Arc<Mutex<StderrTail>>,
    /// Marked changed by every stderr chunk.
    stderr_seen: watch::Receiver<()>,
    stderr_task: Option<JoinHandle<()>>,
    confinement: Enforcement,
}

/// The process's ACP pipes.
pub(crate) struct ServerPipes {
    /// Frames to the server.
    pub(crate) stdin: ChildStdin,
    /// Frames from the server.
    pub(crate) stdout: ChildStdout,
}

impl ManagedProcess {
    /// Starts `command` in `cwd` (its private scratch root), as the root of a new
    /// process tree (see the module doc), confined as the line's plan says, with exactly the launch line's
    /// environment (nothing inherited) and its temp variables pointed at `<cwd>/tmp`.
    pub(crate) fn spawn(
        command: &LaunchLine,
        cwd: &Path,
    ) -> Result<(Self, ServerPipes), AdapterError> {
        let temp = cwd.join(TEMP_DIR);
        ensure_private_dir(&temp).map_err(AdapterError::Scratch)?;
        let temp_vars = TEMP_VARIABLES
            .into_iter()
            .filter(|name| *name == "TMPDIR" || command.env.iter().any(|(key, _)| key == *name));
        let confinement =
            Prepared::build(&command.confinement, &command.program, &command.env, cwd)?;
        let mut launch = confinement.command(&command.program, &command.args);
        launch
            .env_clear()
            .envs(command.env.iter().map(|(k, v)| (k, v)))
            .envs(temp_vars.map(|name| (name, &temp)))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut wrapped = CommandWrap::from(launch);
        #[cfg(unix)]
        wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
        #[cfg(windows)]
        wrapped
            .wrap(process_wrap::tokio::JobObject)
            .wrap(process_wrap::tokio::KillOnDrop);
        let spawned = wrapped.spawn();
        let enforcement = confinement.enforcement;
        // The adapter's copy of the ruleset closes here; the child's closed at its exec.
        #[cfg(target_os = "linux")]
        drop(confinement);
        let mut child = spawned.map_err(AdapterError::Spawn)?;
        let missing = || AdapterError::Spawn(std::io::Error::other("a stdio pipe is missing"));
        let stdin = child.stdin().take().ok_or_else(missing)?;
        let stdout = child.stdout().take().ok_or_else(missing)?;
        let stderr = child.stderr().take().ok_or_else(missing)?;
        let stderr_tail = Arc::new(Mutex::new(StderrTail::default()));
        let (seen, stderr_seen) = watch::channel(());
        let stderr_task = tokio::spawn(crate::diagnostics::counted(drain_stderr(
            stderr,
            stderr_tail.clone(),
            seen,
        )));
        let process = Self {
            child,
            stderr_tail,
            stderr_seen,
            stderr_task: Some(stderr_task),
            confinement: enforcement,
        };
        Ok((process, ServerPipes { stdin, stdout }))
    }

    /// How the kernel confines the process.
    pub(crate) fn confinement(&self) -> Enforcement {
        self.confinement
    }

    /// The number of stderr bytes currently kept (the text itself stays private).
    pub(crate) fn stderr_tail_len(&self) -> usize {
        self.stderr_tail.lock().map_or(0, |tail| tail.bytes.len())
    }

    /// Changes whenever the server writes to stderr; closed once stderr is.
    pub(crate) fn stderr_updates(&self) -> watch::Receiver<()> {
        self.stderr_seen.clone()
    }

    /// The text after `marker` on the last complete stderr line (within the kept tail)
    /// that holds it, trimmed. For `login` only, which shows the sign-in URL to the user;
    /// never logged.
    pub(crate) fn stderr_line_after(&self, marker: &str) -> Option<String> {
        let tail = self.stderr_tail.lock().ok()?;
        let (front, back) = tail.bytes.as_slices();
        let bytes = [front, back].concat();
        drop(tail);
        line_after(&String::from_utf8_lossy(&bytes), marker)
    }

    /// Ends the server: waits up to `grace` for it to exit on its own (its stdin should
    /// already be closed), then kills its whole process tree and reaps it.
    pub(crate) async fn shutdown(mut self, grace: Duration) {
        let exited = tokio::time::timeout(grace, self.child.wait()).await.is_ok();
        if !exited {
            tracing::debug!("server did not exit within its grace period; killing its tree");
        }
        self.kill_tree();
        if let Err(error) = self.child.wait().await {
            tracing::warn!(kind = ?error.kind(), "could not reap the server process");
        }
        if let Some(task) = self.stderr_task.take() {
            // The pipe closes when the tree is gone; a helper that kept stderr open is
            // dead too after the tree kill, so this ends promptly.
            if tokio::time::timeout(grace, task).await.is_err() {
                tracing::warn!("server stderr stayed open after the tree was killed");
            }
        }
        tracing::debug!(stderr_bytes = self.stderr_tail_len(), "server ended");
    }

    /// Whether the process has already exited (reaped here if so).
    pub(crate) fn has_exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)) | Err(_))
    }

    /// Kills the whole tree: the group on Unix, every process of the job on Windows. A
    /// tree already gone is not an error.
    fn kill_tree(&mut self) {
        if let Err(error) = self.child.start_kill()
            && !tree_already_gone(&error)
        {
            tracing::warn!(kind = ?error.kind(), "could not kill the server's process tree");
        }
    }
}

/// Whether a failed kill only says that nothing was left to kill (`ESRCH` on Unix).
fn tree_already_gone(error: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        error.raw_os_error() == Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _unused = error;
        false
    }
}

impl Drop for ManagedProcess {
    fn drop(&mut self) {
        // Only reached without `shutdown` when a turn is torn down abnormally (a panic or
        // an aborted task): kill the tree so nothing outlives its owner.
        if self.stderr_task.is_some() {
            self.kill_tree();
            if let Some(task) = self.stderr_task.take() {
                task.abort();
            }
        }
    }
}

/// The text after `marker` on the last complete line (one that ends with a newline) of
/// `text` that holds it, trimmed; `None` when there is none or nothing follows it.
fn line_after(text: &str, marker: &str) -> Option<String> {
    let complete = &text[..text.rfind('\n')?];
    complete
        .lines()
        .rev()
        .find_map(|line| line.split_once(marker).map(|(_, rest)| rest.trim()))
        .filter(|rest| !rest.is_empty())
        .map(str::to_owned)
}

async fn drain_stderr(
    mut stderr: tokio::process::ChildStderr,
    tail: Arc<Mutex<StderrTail>>,
    seen: watch::Sender<()>,
) {
    let mut buffer = vec![0u8; 8192];
    loop {
        match stderr.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if let (Ok(mut tail), Some(chunk)) = (tail.lock(), buffer.get(..n)) {
                    tail.push(chunk);
                }
                seen.send_replace(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tail keeps the last 64 KiB exactly (the literal, not the constant).
    #[test]
    fn stderr_tail_keeps_the_last_64_kib() {
        let mut tail = StderrTail::default();
        tail.push(&vec![b'a'; 70_000]);
        tail.push(b"end");
        assert_eq!(tail.bytes.len(), 65_536);
        assert_eq!(tail.bytes.back(), Some(&b'd'));
    }

    /// `shutdown`, bounded: a shutdown that never ends fails the test instead of hanging.
    async fn bounded_shutdown(process: ManagedProcess, grace: Duration) -> crate::TestResult {
        tokio::time::timeout(Duration::from_secs(20), process.shutdown(grace))
            .await
            .map_err(|_| "shutdown never ended")?;
        Ok(())
    }

    fn shell(script: &str) -> LaunchLine {
        LaunchLine {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            env: std::env::vars_os().filter(|(k, _)| k == "PATH").collect(),
            digest: None,
            repairs: 0,
            confinement: crate::server::confine::ConfinementPlan::off(),
        }
    }

    /// A server that floods stderr far past any pipe buffer still runs on: stderr is
    /// drained all along (only its tail kept), so the server never blocks writing it, and
    /// the pipe stays open (a closed one would fail, or kill with SIGPIPE, the writer).
    #[tokio::test]
    async fn a_server_flooding_stderr_is_never_held_back() -> crate::TestResult {
        use tokio::io::AsyncBufReadExt;
        let dir = tempfile::tempdir()?;
        let command = shell("head -c 1000000 /dev/zero >&2 && echo flooded; exec sleep 300");
        let (process, pipes) = ManagedProcess::spawn(&command, dir.path())?;
        let mut lines = tokio::io::BufReader::new(pipes.stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await??;
        assert_eq!(line.as_deref(), Some("flooded"));
        bounded_shutdown(process, Duration::from_millis(50)).await?;
        Ok(())
    }

    /// The server's temp directory is its private `<scratch>/tmp`: `TMPDIR` always points
    /// there, `TEMP` and `TMP` only when the launch line passed them.
    #[tokio::test]
    async fn the_temp_variables_point_at_the_private_temp_dir() -> crate::TestResult {
        use tokio::io::AsyncBufReadExt;
        let dir = tempfile::tempdir()?;
        let mut command = shell("echo \"$TMPDIR|${TEMP-unset}|$TMP\"; exec sleep 300");
        command.env.push(("TMP".into(), "/elsewhere".into()));
        let (process, pipes) = ManagedProcess::spawn(&command, dir.path())?;
        let mut lines = tokio::io::BufReader::new(pipes.stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await??
            .ok_or("the shell printed nothing")?;
        let temp = dir.path().join(TEMP_DIR).display().to_string();
        assert_eq!(line, format!("{temp}|unset|{temp}"));
        bounded_shutdown(process, Duration::from_millis(50)).await?;
        Ok(())
    }

    /// A process dropped without `shutdown` (a turn torn down abnormally) still takes
    /// its whole group with it.
    #[tokio::test]
    async fn a_dropped_process_kills_its_whole_group() -> crate::TestResult {
        use tokio::io::AsyncBufReadExt;
        let dir = tempfile::tempdir()?;
        let command = shell("trap '' TERM; sleep 300 & echo $!; wait");
        let (process, pipes) = ManagedProcess::spawn(&command, dir.path())?;
        let mut lines = tokio::io::BufReader::new(pipes.stdout).lines();
        let pid = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await??
            .ok_or("the shell printed no pid")?;
        drop(process);
        let eof = tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await;
        assert!(
            matches!(eof, Ok(Ok(None))),
            "grandchild {pid} outlived the dropped process"
        );
        Ok(())
    }

    /// `shutdown` gives a server whose stdin closed its grace to exit by itself before
    /// the group is killed: a server that finishes its work within the grace is not cut
    /// short.
    #[tokio::test]
    async fn shutdown_lets_the_server_exit_by_itself_within_the_grace() -> crate::TestResult {
        let dir = tempfile::tempdir()?;
        let done = dir.path().join("exited-cleanly");
        let script = format!(
            "trap '' TERM; cat >/dev/null; sleep 0.2; echo ok > '{}'",
            done.display()
        );
        let (process, pipes) = ManagedProcess::spawn(&shell(&script), dir.path())?;
        drop(pipes.stdin);
        bounded_shutdown(process, Duration::from_secs(5)).await?;
        assert!(
            done.exists(),
            "the server was killed before its grace ran out"
        );
        Ok(())
    }

    /// Only a complete line counts, the last one holding the marker wins, and nothing
    /// after the marker is no line.
    #[test]
    fn the_line_after_a_marker_is_read_from_complete_lines_only() {
        let marker = "link: ";
        assert_eq!(
            line_after("noise\nlink: https://a\nmore\n", marker).as_deref(),
            Some("https://a")
        );
        assert_eq!(
            line_after("link: https://a\nlink: https://b \n", marker).as_deref(),
            Some("https://b")
        );
        assert_eq!(line_after("link: https://partial", marker), None);
        assert_eq!(
            line_after("link: https://a\nlink: https://partial", marker).as_deref(),
            Some("https://a")
        );
        assert_eq!(line_after("link: \n", marker), None);
        assert_eq!(line_after("nothing here\n", marker), None);
    }

    /// The server's stderr line is found while it runs, and every write is announced.
    #[tokio::test]
    async fn a_stderr_line_is_found_once_written() -> crate::TestResult {
        use tokio::io::AsyncWriteExt;
        let dir = tempfile::tempdir()?;
        let command = shell("read x; echo \"Open: https://example/x\" >&2; exec sleep 300");
        let (process, mut pipes) = ManagedProcess::spawn(&command, dir.path())?;
        let mut updates = process.stderr_updates();
        assert_eq!(process.stderr_line_after("Open: "), None);
        pipes.stdin.write_all(b"go\n").await?;
        let found = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                if let Some(line) = process.stderr_line_after("Open: ") {
                    return Ok::<_, watch::error::RecvError>(line);
                }
                updates.changed().await?;
            }
        })
        .await??;
        assert_eq!(found, "https://example/x");
        bounded_shutdown(process, Duration::from_millis(50)).await?;
        Ok(())
    }

    #[test]
    fn stderr_tail_is_bounded() {
        let mut tail = StderrTail::default();
        // The design's 64 KiB, written out: a changed constant fails here.
        tail.push(&vec![b'a'; 65_535]);
        assert_eq!(tail.bytes.len(), 65_535);
        tail.push(b"end");
        assert_eq!(tail.bytes.len(), 65_536);
        assert_eq!(tail.bytes.back(), Some(&b'd'));
    }

    /// A shell that starts a grandchild in the same group and ignores SIGTERM: shutdown
    /// must still leave neither of them alive.
    #[tokio::test]
    async fn shutdown_kills_the_whole_group() -> crate::TestResult {
        use tokio::io::AsyncBufReadExt;
        let dir = tempfile::tempdir()?;
        let command = LaunchLine {
            program: "sh".into(),
            args: vec![
                "-c".into(),
                "trap '' TERM; sleep 300 & echo $!; wait".into(),
            ],
            env: std::env::vars_os().filter(|(k, _)| k == "PATH").collect(),
            digest: None,
            repairs: 0,
            confinement: crate::server::confine::ConfinementPlan::off(),
        };
        let (process, pipes) = ManagedProcess::spawn(&command, dir.path())?;
        let mut lines = tokio::io::BufReader::new(pipes.stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await??
            .ok_or("the shell printed no pid")?;
        let pid: i32 = line.trim().parse()?;
        let pipes_stdin = pipes.stdin;
        drop(pipes_stdin);
        bounded_shutdown(process, Duration::from_millis(50)).await?;
        // The grandchild holds the stdout pipe: end-of-file means every process of the
        // group has exited (a zombie's descriptors are already closed).
        let eof = tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await;
        assert!(
            matches!(eof, Ok(Ok(None))),
            "grandchild {pid} kept the group's stdout open after the group kill"
        );
        Ok(())
    }
}
