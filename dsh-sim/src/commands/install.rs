//! `dsh-sim install`: installs the pinned server (or repairs an install that fails its
//! check) with the adapter's own installer, showing progress (a bar on a terminal, plain
//! lines on stderr otherwise), and says where it is and how it was verified. With
//! `--verify` it only checks, hashing every file in full, and changes nothing.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use antigravity_acp::install::{
    AgentIndexSource, InstallEvent, InstallOptions, InstallOutcome, InstallStep, Installer,
    ProgressSink,
};
use indicatif::{ProgressBar, ProgressStyle};

use crate::scenario::KillStep;

/// The `install` subcommand's settings.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct InstallArgs {
    /// A registry document URL (an agent entry or an index); default: the registry's
    /// 1.3.0 entry, compiled in.
    #[arg(long, value_name = "URL")]
    pub registry: Option<String>,
    /// The cache folder; default: the per-user cache dir +
    /// `antigravity-acp/1.3.0/<platform>`.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Allow plain HTTP to loopback hosts (a local mirror, tests).
    #[arg(long)]
    pub insecure_loopback: bool,
    /// Require this archive SHA-256 instead of the built-in 1.3.0 pin (a mirror).
    #[arg(long, value_name = "HEX")]
    pub sha256: Option<String>,
    /// Only check: hash every file in full, report what differs, change nothing.
    #[arg(long)]
    pub verify: bool,
    /// Pause before extracting the Nth file until stdin closes (tests that kill or race
    /// an installer mid-extraction).
    #[arg(long, hide = true, value_name = "N")]
    pub pause_at_file: Option<usize>,
    /// Pause at this install step until stdin closes (tests that kill an installer
    /// there): download, verify, extract (before the second file), receipt, rename,
    /// retire.
    #[arg(long, hide = true, value_name = "STEP", value_parser = parse_step)]
    pub pause_at: Option<KillStep>,
}

fn parse_step(name: &str) -> Result<KillStep, String> {
    KillStep::ALL
        .into_iter()
        .find(|step| step.as_str() == name)
        .ok_or_else(|| format!("`{name}` is not an install step"))
}

/// Whether `event` is where `step` pauses (`extracted`: files extracted so far, this one
/// included).
fn pauses_at(step: KillStep, event: &InstallEvent, extracted: usize) -> bool {
    match (step, event) {
        (KillStep::Download, InstallEvent::Step(InstallStep::Download))
        | (KillStep::Verify, InstallEvent::Step(InstallStep::Verify))
        | (KillStep::Receipt, InstallEvent::Step(InstallStep::Receipt))
        | (KillStep::Rename, InstallEvent::Step(InstallStep::Rename))
        | (KillStep::Retire, InstallEvent::Step(InstallStep::Retire)) => true,
        (KillStep::Extract, InstallEvent::Extracting { .. }) => extracted == 2,
        _ => false,
    }
}

/// Runs the command; the exit code is 0 only when a verified install is in place.
pub async fn run_install(args: InstallArgs) -> anyhow::Result<bool> {
    let display = Arc::new(Display::new());
    let sink_display = display.clone();
    let pause_at = args.pause_at_file;
    let pause_at_step = args.pause_at;
    let extracted = Mutex::new(0usize);
    let options = InstallOptions {
        cache_dir: args.cache.clone(),
        agent_index: args
            .registry
            .clone()
            .map_or(AgentIndexSource::Builtin, AgentIndexSource::Url),
        insecure_loopback: args.insecure_loopback,
        sha256_override: args.sha256.clone(),
        progress: Some(ProgressSink(Arc::new(move |event: &InstallEvent| {
            sink_display.show(event);
            let mut count = 0;
            if let InstallEvent::Extracting { .. } = event {
                count = extracted.lock().map_or(0, |mut c| {
                    *c += 1;
                    *c
                });
            }
            if let (InstallEvent::Extracting { path }, Some(n)) = (event, pause_at)
                && count == n
            {
                pause(&format!("before extracting {path}"));
            }
            if let Some(step) = pause_at_step
                && pauses_at(step, event, count)
            {
                pause(&format!("at {}", step.as_str()));
            }
        }))),
        ..InstallOptions::default()
    };
    let installer = Installer::new(options)?;
    if args.verify {
        let report = installer.verify().await;
        if report.differences.is_empty() {
            println!(
                "verified: {} (every file hashed in full)",
                report.dir.display()
            );
            return Ok(true);
        }
        println!("NOT verified: {}", report.dir.display());
        for difference in &report.differences {
            println!("  - {difference}");
        }
        return Ok(false);
    }
    let result = installer.ensure().await;
    display.finish();
    match result {
        Ok(report) => {
            let how = match &report.outcome {
                InstallOutcome::Reused => {
                    "reused (receipt, sizes, modes and file identities checked)".to_owned()
                }
                InstallOutcome::Installed => {
                    "installed (archive digest pinned, every file hashed)".to_owned()
                }
                InstallOutcome::Repaired { why } => {
                    format!("repaired ({why}; archive digest pinned, every file hashed)")
                }
            };
            println!("{how}");
            println!("server:  {}", report.server.command.display());
            println!("folder:  {}", report.server.dir.display());
            Ok(true)
        }
        Err(error) => {
            eprintln!("dsh-sim install: {} ({})", error, error.reason());
            Ok(false)
        }
    }
}

/// Tells the test driving this process that it paused (`where`), then waits for stdin
/// to close.
fn pause(at: &str) {
    let mut out = std::io::stdout();
    let _written = writeln!(out, "paused {at}");
    let _flushed = out.flush();
    let mut line = String::new();
    while std::io::stdin()
        .lock()
        .read_line(&mut line)
        .is_ok_and(|n| n > 0)
    {
        line.clear();
    }
}

/// A progress bar on a terminal, plain lines on stderr otherwise.
struct Display {
    bar: Option<ProgressBar>,
}

impl Display {
    fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(0);
            if let Ok(style) = ProgressStyle::with_template(
                "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
            ) {
                bar.set_style(style);
            }
            bar
        });
        Self { bar }
    }

    fn show(&self, event: &InstallEvent) {
        let line = match event {
            InstallEvent::Reused => "the install passed its check".to_owned(),
            InstallEvent::Repairing { why } => format!("repairing the install: {why}"),
            InstallEvent::WaitingForLock => {
                "waiting for the cache lock (another installer is running)".to_owned()
            }
            InstallEvent::DownloadStarted { url, total } => {
                if let (Some(bar), Some(total)) = (&self.bar, total) {
                    bar.set_length(*total);
                    bar.set_message("downloading");
                    return;
                }
                format!(
                    "downloading {url} ({} bytes)",
                    total.map_or("?".to_owned(), |t| t.to_string())
                )
            }
            InstallEvent::Downloaded { bytes, total } => {
                if let Some(bar) = &self.bar {
                    bar.set_position(*bytes);
                    return;
                }
                format!(
                    "downloaded {bytes} of {} bytes",
                    total.map_or("?".to_owned(), |t| t.to_string())
                )
            }
            InstallEvent::Retrying { attempt, reason } => {
                format!("retrying the download (attempt {attempt}) after: {reason}")
            }
            InstallEvent::Extracting { path } => format!("extracting {path}"),
            InstallEvent::Step(step) => match step {
                InstallStep::Download => "writing the download to the cache".to_owned(),
                InstallStep::Verify => "checking the archive's digest".to_owned(),
                InstallStep::Receipt => "writing the receipt".to_owned(),
                InstallStep::Rename => "publishing the install".to_owned(),
                InstallStep::Retire => "removing the replaced install".to_owned(),
            },
            InstallEvent::Installed { repaired } => {
                if *repaired {
                    "published the repaired install".to_owned()
                } else {
                    "published the install".to_owned()
                }
            }
        };
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
