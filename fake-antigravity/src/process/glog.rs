//! Diagnostics on stderr in the glog/absl format the real server uses
//! (`I1129 20:04:03.123456 12345 main.py:80] Starting AGY ACP Server...`), in UTC.
//! stdout is never touched here: it carries only JSON-RPC. With a journal, every line is
//! also appended to a copy next to it ([`copy_to`]), which the scenario runner leaves in
//! a failed scenario's artefacts (the adapter never exposes a server's stderr).

use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where every line is copied, once [`copy_to`] named a file.
static COPY: OnceLock<Mutex<std::fs::File>> = OnceLock::new();

/// From now on, appends every line written to stderr to `path` as well (created; the
/// first call wins). Only lines written through [`Glog`] are copied (not the bytes of
/// `process.stderr_flood_bytes`).
pub fn copy_to(path: &Path) -> std::io::Result<()> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let _first_wins = COPY.set(Mutex::new(file));
    Ok(())
}

/// The stderr logger. Cheap to clone.
#[derive(Debug, Clone, Copy, Default)]
pub struct Glog {
    debug: bool,
}

impl Glog {
    /// A logger; `debug` enables [`Glog::debug`] lines (`--debug`).
    pub fn new(debug: bool) -> Self {
        Self { debug }
    }

    /// An `I` line; `source` is the pseudo Python location, e.g. `main.py:80`.
    pub fn info(&self, source: &str, message: &str) {
        write_line('I', source, message);
    }

    /// A `W` line.
    pub fn warning(&self, source: &str, message: &str) {
        write_line('W', source, message);
    }

    /// An `E` line.
    pub fn error(&self, source: &str, message: &str) {
        write_line('E', source, message);
    }

    /// An `I` line written only with `--debug`.
    pub fn debug(&self, source: &str, message: &str) {
        if self.debug {
            write_line('I', source, message);
        }
    }
}

fn write_line(level: char, source: &str, message: &str) {
    let line = format_line(
        level,
        SystemTime::now(),
        std::process::id(),
        source,
        message,
    );
    let mut stderr = std::io::stderr().lock();
    // A closed stderr must not take the fake down, and there is nowhere to report it.
    let _stderr_closed = stderr.write_all(line.as_bytes());
    if let Some(Ok(mut copy)) = COPY.get().map(Mutex::lock) {
        // Nor can a failed copy.
        let _copy_failed = copy.write_all(line.as_bytes());
    }
}

/// Formats one glog line (with its trailing newline).
pub fn format_line(level: char, at: SystemTime, pid: u32, source: &str, message: &str) -> String {
    let since_epoch = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since_epoch.as_secs();
    let micros = since_epoch.subsec_micros();
    let (_, month, day) = civil_from_days((secs / 86_400) as i64);
    let in_day = secs % 86_400;
    format!(
        "{level}{month:02}{day:02} {:02}:{:02}:{:02}.{micros:06} {pid} {source}] {message}\n",
        in_day / 3600,
        (in_day % 3600) / 60,
        in_day % 60
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn formats_like_absl() {
        // 2026-11-29 20:04:03.123456 UTC
        let at = UNIX_EPOCH + Duration::from_micros(1_795_982_643_123_456);
        let line = format_line('I', at, 12345, "main.py:80", "Starting AGY ACP Server...");
        assert_eq!(
            line,
            "I1129 20:04:03.123456 12345 main.py:80] Starting AGY ACP Server...\n"
        );
    }
}
