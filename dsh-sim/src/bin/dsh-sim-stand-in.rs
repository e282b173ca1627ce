//! `dsh-sim-stand-in`: the server member of an install scenario's archive on Windows,
//! where the member must be a program (`agy_acp_server.exe`) and cannot be the shell
//! script the Unix archives carry. It reads its command line from the archive's sidecar
//! member beside it (`<its own name>.stand-in`: the program on the first line, one
//! argument per line after it; dsh-sim writes it: the fake and its script and journal),
//! appends the arguments it was given (the registry's), runs that with its own stdio and
//! environment, and exits with its exit code. The adapter's Job Object holds both
//! processes, so a kill of the tree reaches the fake too.
//!
//! Only std: the binary is copied into every Windows install archive, so it stays small.

use std::path::PathBuf;
use std::process::Command;

/// The sidecar's extension, beside this program's own name.
const SIDECAR_EXTENSION: &str = "stand-in";

fn main() {
    // The fake's whole exit code (a Windows one is 32 bits), passed on as it is.
    std::process::exit(run().unwrap_or_else(|message| {
        eprintln!("dsh-sim-stand-in: {message}");
        2
    }));
}

fn run() -> Result<i32, String> {
    let own = std::env::current_exe().map_err(|e| format!("cannot find itself: {e}"))?;
    let sidecar: PathBuf = own.with_extension(SIDECAR_EXTENSION);
    let text = std::fs::read_to_string(&sidecar)
        .map_err(|e| format!("cannot read {}: {e}", sidecar.display()))?;
    let mut lines = text.lines().filter(|line| !line.is_empty());
    let program = lines
        .next()
        .ok_or_else(|| format!("{} names no program", sidecar.display()))?;
    let status = Command::new(program)
        .args(lines)
        .args(std::env::args_os().skip(1))
        .status()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    // No code: ended by a signal (Unix only; the stand-in runs on Windows).
    Ok(status.code().unwrap_or(1))
}
