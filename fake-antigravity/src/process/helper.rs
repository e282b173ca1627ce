//! The fake's helper processes: the harness child that lingers (`process.spawn_lingering_child`)
//! and the helper that dies late (`process.slow_death_ms`). Each is the fake's own
//! executable started again with `--fake-helper-sleep-ms=MS` (and
//! `--fake-helper-after-stdin` to wait for stdin's end first), so no shell or `sleep`
//! command is needed on any system. Under `dsh-sim fake-server` the executable is
//! dsh-sim's: the arguments before the fake's own (its subcommand) are repeated.

use std::ffi::OsString;
use std::io::Read;
use std::process::{Command, ExitCode};
use std::sync::OnceLock;
use std::time::Duration;

/// The flag that makes the process a helper sleeping this many milliseconds.
pub const SLEEP_FLAG: &str = "fake-helper-sleep-ms";

/// The flag that makes a helper wait for its stdin to end before it sleeps.
pub const AFTER_STDIN_FLAG: &str = "fake-helper-after-stdin";

/// The arguments between the executable and the fake's own (`fake-server` under
/// dsh-sim; none for the `fake-antigravity` binary).
static PREFIX: OnceLock<Vec<OsString>> = OnceLock::new();

/// Remembers how this process was started, given the fake's own arguments (the tail of
/// the process's command line).
pub fn remember_prefix(own: &[OsString]) {
    let full: Vec<OsString> = std::env::args_os().skip(1).collect();
    let prefix = full
        .len()
        .checked_sub(own.len())
        .filter(|&at| full.get(at..) == Some(own))
        .and_then(|at| full.get(..at))
        .map(<[OsString]>::to_vec)
        .unwrap_or_default();
    // A second call (a test serving twice in one process) keeps the first answer, which
    // describes the same executable.
    let _first = PREFIX.set(prefix);
}

/// The command of a helper that sleeps `ms` milliseconds, after its stdin ends when
/// `after_stdin` is set.
pub fn helper_command(ms: u64, after_stdin: bool) -> std::io::Result<Command> {
    let mut command = Command::new(std::env::current_exe()?);
    command
        .args(PREFIX.get().map(Vec::as_slice).unwrap_or_default())
        .arg(format!("--{SLEEP_FLAG}={ms}"));
    if after_stdin {
        command.arg(format!("--{AFTER_STDIN_FLAG}"));
    }
    Ok(command)
}

/// Runs as a helper: waits for stdin to end when asked, then sleeps and exits 0.
pub fn run_helper(ms: u64, after_stdin: bool) -> ExitCode {
    if after_stdin {
        let mut sink = [0u8; 512];
        let mut stdin = std::io::stdin().lock();
        // Any end of the read (end of file, or an error) means the fake is gone.
        while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    }
    std::thread::sleep(Duration::from_millis(ms));
    ExitCode::SUCCESS
}
