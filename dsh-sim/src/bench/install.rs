//! `dsh-sim bench-install`: what the installer's checks cost on this machine, for an
//! install the size of the real one (a 926 MB server and a 130 MB harness by default,
//! stored uncompressed so building the archive stays cheap). Measures the first install
//! (download over loopback, hash, extract, receipt), the launch-time quick check, a
//! quick check that must hash a file whose identity changed, and a full `--verify`.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use antigravity_acp::install::{
    AgentIndexSource, InstallOptions, InstallOutcome, Installer, current_platform, required_members,
};
use anyhow::{Context, bail};
use sha2::Digest;

use crate::runner::provision::{AgentIndexServer, agent_index_document};
use crate::scenario::{RegistryKind, ServeKind};

/// One measured figure.
#[derive(Debug, Clone)]
pub struct InstallFigure {
    /// What was timed.
    pub name: &'static str,
    /// The median over the runs.
    pub median: Duration,
    /// How many runs.
    pub runs: usize,
}

/// Builds an archive with a `server_mib` server and `harness_mib` harness and times the
/// installer on it.
pub async fn run_install_bench(
    server_mib: usize,
    harness_mib: usize,
    runs: usize,
) -> anyhow::Result<Vec<InstallFigure>> {
    let work = tempfile::Builder::new()
        .prefix("dsh-sim-bench-install-")
        .tempdir()?;
    let platform = current_platform()?;
    let [server, harness] = required_members(platform);
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .system(zip::System::Unix)
        .unix_permissions(0o755)
        .large_file(true);
    let block: Vec<u8> = (0..1024 * 1024).map(|i| (i * 31 % 251) as u8).collect();
    for (name, mib) in [(server, server_mib), (harness, harness_mib)] {
        zip.start_file(name, stored)?;
        for _ in 0..mib {
            zip.write_all(&block)?;
        }
    }
    let bytes = zip.finish()?.into_inner();
    let digest = hex::encode(sha2::Sha256::digest(&bytes));
    let host = AgentIndexServer::start(bytes, ServeKind::Ok, |url| {
        agent_index_document(RegistryKind::Entry, platform, url, None)
    })
    .await
    .map_err(anyhow::Error::msg)?;
    let options = InstallOptions {
        cache_dir: Some(work.path().join("cache")),
        agent_index: AgentIndexSource::Url(host.index_url()),
        insecure_loopback: true,
        sha256_override: Some(digest),
        ..InstallOptions::default()
    };
    let installer = Arc::new(Installer::new(options)?);
    let mut figures = Vec::new();
    let started = Instant::now();
    let first = installer.ensure().await?;
    if first.outcome != InstallOutcome::Installed {
        bail!("the first install reported {:?}", first.outcome);
    }
    figures.push(InstallFigure {
        name: "first install: download, hash, extract, receipt, publish",
        median: started.elapsed(),
        runs: 1,
    });
    let mut quick = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let report = installer.ensure().await?;
        quick.push(started.elapsed());
        if report.outcome != InstallOutcome::Reused {
            bail!("a quick check reported {:?}", report.outcome);
        }
    }
    figures.push(median_of(
        "launch-time check (receipt, sizes, modes, identities)",
        quick,
    ));
    let mut touched = Vec::new();
    let server_path = first.server.command.clone();
    for _ in 0..runs.min(3) {
        let file = std::fs::File::options()
            .write(true)
            .open(&server_path)
            .context("cannot open the installed server")?;
        file.set_modified(std::time::SystemTime::now())?;
        drop(file);
        let started = Instant::now();
        let report = installer.ensure().await;
        touched.push(started.elapsed());
        // The stamp no longer matches, so the file is hashed; its content is intact, so
        // the install stays in use (the receipt keeps the old stamp: the next launch
        // hashes again).
        if !matches!(report, Ok(ref r) if r.outcome == InstallOutcome::Reused) {
            bail!("a touched but intact server was not reused: {report:?}");
        }
    }
    figures.push(median_of(
        "launch-time check hashing the server (mtime changed)",
        touched,
    ));
    let mut full = Vec::new();
    for _ in 0..runs.min(3) {
        let started = Instant::now();
        let report = installer.verify().await;
        full.push(started.elapsed());
        if !report.differences.is_empty() {
            bail!("verify found {:?}", report.differences);
        }
    }
    figures.push(median_of("full verify (every file hashed)", full));
    host.stop().await;
    Ok(figures)
}

fn median_of(name: &'static str, samples: Vec<Duration>) -> InstallFigure {
    InstallFigure {
        name,
        median: super::median::median_duration(&samples),
        runs: samples.len(),
    }
}
