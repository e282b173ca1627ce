//! How an install's progress is shown (issue 36 §5, "The first run"): the installer's
//! events ([`InstallEvent`]) rendered as text, by [`InstallProgress`], which is pure: it is
//! handed each event with the time it arrived, so tests drive the clock.
//!
//! - [`ProgressMode::Terminal`] (`doctor --install` with stderr a terminal): a bar with the
//!   bytes, the total, the rate and the time left, redrawn in place (`\r`, then erase to the
//!   end of the line) at most every [`REDRAW_EVERY`]; a line of its own at each step.
//! - [`ProgressMode::Lines`] (stderr a file or a pipe, and DSH's log): one line at each
//!   step, and while the download runs at most one progress line every [`LINE_EVERY`]:
//!   never one per chunk.
//!
//! Nothing rendered quotes a URL, a remote text or a credential: the download's URL is
//! never shown, a retry shows only the failure's stable reason. [`progress_sink`] wraps a
//! renderer into the installer's [`ProgressSink`]; [`log_sink`] is DSH's (every line
//! prefixed `install: `), and [`attach`] adds a sink to a config's installer.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::config::{AdapterConfig, ServerSource};
use crate::install::{InstallEvent, InstallStep, ProgressSink, format_bytes};

/// The least time between two progress lines ([`ProgressMode::Lines`]).
pub const LINE_EVERY: Duration = Duration::from_secs(5);
/// The least time between two redraws of the bar ([`ProgressMode::Terminal`]).
pub const REDRAW_EVERY: Duration = Duration::from_millis(100);
/// The bar's width in characters, brackets aside.
const BAR_WIDTH: usize = 24;
/// Erase from the cursor to the end of the line (ANSI; Node's stderr on Windows
/// translates it).
const ERASE_LINE: &str = "\x1b[K";

/// Where the progress goes, so how it is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProgressMode {
    /// A terminal: a bar redrawn in place.
    Terminal,
    /// A file, a pipe or a log: plain lines, a few seconds apart.
    Lines,
}

/// The download under way.
#[derive(Debug, Clone, Copy)]
struct Download {
    /// When it started (its `DownloadStarted`).
    started: Instant,
    /// Bytes so far.
    bytes: u64,
    /// The announced size.
    total: Option<u64>,
}

/// Renders install events as text for stderr or a log (see the module doc).
#[derive(Debug)]
pub struct InstallProgress {
    mode: ProgressMode,
    /// The least time between two progress lines or redraws.
    every: Duration,
    download: Option<Download>,
    /// When the last progress line or bar was shown.
    last_shown: Option<Instant>,
    /// The bar is on screen without its newline.
    bar_open: bool,
    /// The `extracting` line was shown.
    extracting: bool,
}

impl InstallProgress {
    /// A renderer for `mode`, with its default pace ([`REDRAW_EVERY`], [`LINE_EVERY`]).
    pub fn new(mode: ProgressMode) -> Self {
        let every = match mode {
            ProgressMode::Terminal => REDRAW_EVERY,
            ProgressMode::Lines => LINE_EVERY,
        };
        Self {
            mode,
            every,
            download: None,
            last_shown: None,
            bar_open: false,
            extracting: false,
        }
    }

    /// The text to write for `event`, arrived at `now` (each line ends with `\n`; a
    /// redraw of the bar starts with `\r` and has none), or `None` for nothing.
    pub fn event(&mut self, event: &InstallEvent, now: Instant) -> Option<String> {
        match event {
            InstallEvent::DownloadStarted { total, .. } => {
                self.download = Some(Download {
                    started: now,
                    bytes: 0,
                    total: *total,
                });
                self.last_shown = Some(now);
                self.extracting = false;
                let size = total.map_or_else(|| "size not announced".to_owned(), format_bytes);
                Some(self.line(&format!("downloading the pinned server ({size})")))
            }
            InstallEvent::Downloaded { bytes, total } => self.downloaded(*bytes, *total, now),
            InstallEvent::Retrying { attempt, reason } => {
                self.download = None;
                Some(self.line(&format!(
                    "the download failed ({reason}); trying again (attempt {attempt})"
                )))
            }
            InstallEvent::Step(step) => self.step(*step, now),
            InstallEvent::Extracting { .. } if !self.extracting => {
                self.extracting = true;
                Some(self.line("extracting"))
            }
            InstallEvent::Extracting { .. } | InstallEvent::Reused => None,
            InstallEvent::Repairing { why } => {
                Some(self.line(&format!("repairing the install: {why}")))
            }
            InstallEvent::WaitingForLock => {
                Some(self.line("waiting for another install of the server to finish"))
            }
            InstallEvent::Installed { repaired } => Some(self.line(if *repaired {
                "repaired: the pinned server is installed"
            } else {
                "installed the pinned server"
            })),
        }
    }

    /// A step begins: its line (the download's own start is `DownloadStarted`'s).
    fn step(&mut self, step: InstallStep, now: Instant) -> Option<String> {
        let text = match step {
            InstallStep::Download => return None,
            InstallStep::Verify => match self.download.take() {
                Some(download) => format!(
                    "downloaded {} in {}; checking its SHA-256",
                    format_bytes(download.bytes),
                    duration(now.saturating_duration_since(download.started))
                ),
                None => "checking the archive's SHA-256".to_owned(),
            },
            InstallStep::Receipt => "writing the receipt".to_owned(),
            InstallStep::Rename => "publishing the install".to_owned(),
            InstallStep::Retire => "removing the replaced install".to_owned(),
        };
        Some(self.line(&text))
    }

    /// Bytes received: a redraw or a line when one is due.
    fn downloaded(&mut self, bytes: u64, total: Option<u64>, now: Instant) -> Option<String> {
        let download = self.download.get_or_insert(Download {
            started: now,
            bytes: 0,
            total,
        });
        download.bytes = bytes;
        download.total = total;
        let download = *download;
        let complete = total == Some(bytes);
        let due = self
            .last_shown
            .is_none_or(|last| now.saturating_duration_since(last) >= self.every);
        match self.mode {
            ProgressMode::Terminal if due || complete => {
                self.last_shown = Some(now);
                self.bar_open = true;
                Some(format!("\r{}{ERASE_LINE}", bar(&download, now)))
            }
            // The end of the download is the `verify` step's line.
            ProgressMode::Lines if due && !complete => {
                self.last_shown = Some(now);
                Some(format!("{}\n", progress_line(&download, now)))
            }
            _ => None,
        }
    }

    /// `text` as a line of its own (after the bar, when one is open).
    fn line(&mut self, text: &str) -> String {
        let before = if std::mem::take(&mut self.bar_open) {
            "\n"
        } else {
            ""
        };
        format!("{before}{text}\n")
    }
}

/// The bar: `[=========>          ] 120.0 MiB / 318.3 MiB  37%  12.0 MiB/s  17 s left`;
/// with no announced size, the bytes and the rate only.
fn bar(download: &Download, now: Instant) -> String {
    let rate = rate(download, now);
    let speed = rate.map_or_else(String::new, |r| format!("  {}/s", format_bytes(r as u64)));
    let Some(total) = download.total.filter(|t| *t > 0) else {
        return format!("{} downloaded{speed}", format_bytes(download.bytes));
    };
    let done = download.bytes.min(total);
    let filled = usize::try_from(done.saturating_mul(BAR_WIDTH as u64) / total).unwrap_or(0);
    let mut cells = "=".repeat(filled);
    if filled < BAR_WIDTH {
        cells.push('>');
        cells.push_str(&" ".repeat(BAR_WIDTH - filled - 1));
    }
    let left = time_left(download, total, rate)
        .map_or_else(String::new, |left| format!("  {} left", duration(left)));
    format!(
        "[{cells}] {} / {}  {}%{speed}{left}",
        format_bytes(download.bytes),
        format_bytes(total),
        done.saturating_mul(100) / total
    )
}

/// The plain line: `downloading: 120.0 MiB of 318.3 MiB (37%), 12.0 MiB/s, about 17 s left`.
fn progress_line(download: &Download, now: Instant) -> String {
    let rate = rate(download, now);
    let speed = rate.map_or_else(String::new, |r| format!(", {}/s", format_bytes(r as u64)));
    let bytes = format_bytes(download.bytes);
    match download.total.filter(|t| *t > 0) {
        Some(total) => {
            let left = time_left(download, total, rate).map_or_else(String::new, |left| {
                format!(", about {} left", duration(left))
            });
            format!(
                "downloading: {bytes} of {} ({}%){speed}{left}",
                format_bytes(total),
                download.bytes.min(total).saturating_mul(100) / total
            )
        }
        None => format!("downloading: {bytes} so far{speed}"),
    }
}

/// Bytes a second since the download started, once some time has passed and bytes came.
fn rate(download: &Download, now: Instant) -> Option<f64> {
    let elapsed = now
        .saturating_duration_since(download.started)
        .as_secs_f64();
    (elapsed >= 0.001 && download.bytes > 0).then(|| download.bytes as f64 / elapsed)
}

/// What is left at `rate` (nothing once every byte is in).
fn time_left(download: &Download, total: u64, rate: Option<f64>) -> Option<Duration> {
    let left = total.saturating_sub(download.bytes);
    rate.filter(|_| left > 0)
        .map(|rate| Duration::from_secs_f64(left as f64 / rate))
}

/// `7 s`, `3 min 05 s`, `1 h 02 min`, rounded up to the second.
fn duration(span: Duration) -> String {
    let secs = span.as_secs() + u64::from(span.subsec_nanos() > 0);
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min {:02} s", secs / 60, secs % 60),
        _ => format!("{} h {:02} min", secs / 3600, (secs % 3600) / 60),
    }
}

/// The installer's sink for a renderer in `mode`: each event rendered at the time it
/// arrives, and what it renders handed to `write`.
pub fn progress_sink(
    mode: ProgressMode,
    write: impl Fn(String) + Send + Sync + 'static,
) -> ProgressSink {
    let renderer = Mutex::new(InstallProgress::new(mode));
    ProgressSink(Arc::new(move |event: &InstallEvent| {
        let text = match renderer.lock() {
            Ok(mut renderer) => renderer.event(event, Instant::now()),
            Err(_) => None,
        };
        if let Some(text) = text {
            write(text);
        }
    }))
}

/// DSH's sink: plain lines ([`ProgressMode::Lines`]), each handed to `log` without its
/// newline and prefixed `install: `.
pub fn log_sink(log: impl Fn(String) + Send + Sync + 'static) -> ProgressSink {
    progress_sink(ProgressMode::Lines, move |text| {
        for line in text.lines().filter(|line| !line.is_empty()) {
            log(format!("install: {line}"));
        }
    })
}

/// Adds `sink` to the installer `config` launches from (after any sink it has); a config
/// that names a server command has no installer, and is left as it is.
pub fn attach(config: &mut AdapterConfig, sink: ProgressSink) {
    if let ServerSource::Installed(options) = &mut config.server {
        options.progress = Some(ProgressSink::chain(options.progress.take(), sink));
    }
}

#[cfg(test)]
mod tests;
