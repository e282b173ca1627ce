//! The installer end to end over a real loopback HTTP server and a real ZIP archive:
//! install then reuse, the two depths of check, what `verify` reports, and that nothing
//! is fetched or written before `ensure`.

use std::io::Write;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::routing::get;
use sha2::Digest;

use super::*;

type TestResult = crate::TestResult;

/// A loopback host serving one archive; counts the requests.
struct Host {
    url: String,
    hits: Arc<AtomicUsize>,
    stop: tokio_util::sync::CancellationToken,
}

impl Drop for Host {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn serve(archive: Vec<u8>) -> Result<Host, Box<dyn std::error::Error + Send + Sync>> {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let url = format!("http://{}/a.zip", listener.local_addr()?);
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = Router::new().route(
        "/a.zip",
        get(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            let body = archive.clone();
            async move { body }
        }),
    );
    let stop = tokio_util::sync::CancellationToken::new();
    let shutdown = stop.clone().cancelled_owned();
    tokio::spawn(async move {
        let _served = axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await;
    });
    Ok(Host { url, hits, stop })
}

fn archive(cmd_body: &[u8]) -> Result<Vec<u8>, Box<dyn std::error::Error + Send + Sync>> {
    let [server, harness] = required_members(current_platform()?);
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .system(zip::System::Unix)
        .unix_permissions(0o755);
    zip.start_file(server, options)?;
    zip.write_all(cmd_body)?;
    zip.start_file(harness, options)?;
    zip.write_all(&[b'h'; 4096])?;
    Ok(zip.finish()?.into_inner())
}

fn index_for(url: &str, cmd: &str) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let mut entry: serde_json::Value = serde_json::from_str(BUILTIN_ENTRY)?;
    let target = &mut entry["distribution"]["binary"][current_platform()?];
    target["archive"] = url.into();
    target["cmd"] = cmd.into();
    Ok(entry.to_string())
}

fn options_for(cache: &std::path::Path, index: String, bytes: &[u8]) -> InstallOptions {
    InstallOptions {
        cache_dir: Some(cache.to_path_buf()),
        agent_index: AgentIndexSource::Document(index),
        insecure_loopback: true,
        sha256_override: Some(hex::encode(sha2::Sha256::digest(bytes))),
        ..InstallOptions::default()
    }
}

/// The options of an install of `bytes` served by `host` into `cache`, with the agent
/// index's `cmd` the server member.
fn served_options(
    bytes: &[u8],
    host: &Host,
    cache: &std::path::Path,
) -> Result<InstallOptions, Box<dyn std::error::Error + Send + Sync>> {
    let cmd = format!("./{}", required_members(current_platform()?)[0]);
    Ok(options_for(cache, index_for(&host.url, &cmd)?, bytes))
}

/// An installer for `bytes` served by `host` (see [`served_options`]).
fn installer_for(
    bytes: &[u8],
    host: &Host,
    cache: &std::path::Path,
) -> Result<Installer, Box<dyn std::error::Error + Send + Sync>> {
    Ok(Installer::new(served_options(bytes, host, cache)?)?)
}

/// A served archive, a fresh cache and an installer for them, installed once (also used
/// by `user_commands::install_check`'s tests, through the options).
pub(crate) struct Installed {
    host: Host,
    pub(crate) cache: tempfile::TempDir,
    installer: Installer,
    /// The options the installer was made from.
    pub(crate) options: InstallOptions,
}

impl Installed {
    pub(crate) async fn new(
        server_body: &[u8],
    ) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        let bytes = archive(server_body)?;
        let host = serve(bytes.clone()).await?;
        let cache = tempfile::tempdir()?;
        let options = served_options(&bytes, &host, cache.path())?;
        let installer = Installer::new(options.clone())?;
        installer.ensure().await?;
        Ok(Self {
            host,
            cache,
            installer,
            options,
        })
    }

    /// The installed harness file.
    pub(crate) fn harness(&self) -> Result<std::path::PathBuf, InstallError> {
        Ok(self
            .cache
            .path()
            .join(CURRENT_DIR)
            .join(required_members(current_platform()?)[1]))
    }
}

#[tokio::test]
async fn a_fresh_cache_is_installed_then_reused() -> TestResult {
    let bytes = archive(b"#!/bin/sh\n")?;
    let host = serve(bytes.clone()).await?;
    let cache = tempfile::tempdir()?;
    let cmd = format!("./{}", required_members(current_platform()?)[0]);
    let installer = installer_for(&bytes, &host, cache.path())?;
    let first = installer.ensure().await?;
    assert_eq!(first.outcome, InstallOutcome::Installed);
    let current = cache.path().join(CURRENT_DIR);
    assert_eq!(first.server.command, current.join(&cmd[2..]));
    let expected_args: Vec<String> = if cfg!(target_os = "linux") {
        vec!["--uid=".into()]
    } else {
        Vec::new()
    };
    assert_eq!(first.server.args, expected_args);
    let harness = current.join(required_members(current_platform()?)[1]);
    assert!(
        first
            .server
            .env
            .contains(&(HARNESS_VARIABLE.to_owned(), harness.display().to_string()))
    );
    let second = installer.ensure().await?;
    assert_eq!(second.outcome, InstallOutcome::Reused);
    assert_eq!(host.hits.load(Ordering::SeqCst), 1);
    let receipt = Receipt::read(&current)?;
    assert_eq!(receipt.version, "1.3.0");
    assert_eq!(
        receipt.archive_sha256,
        hex::encode(sha2::Sha256::digest(&bytes))
    );
    assert_eq!(receipt.digest_checked_against, "override");
    Ok(())
}

/// The launch-time check trusts a file whose size, mode, inode and mtime are unchanged
/// (hashing a 926 MB server at every launch costs seconds); `verify` hashes everything.
#[tokio::test]
async fn a_flip_with_its_mtime_restored_is_found_by_verify() -> TestResult {
    let fixture = Installed::new(b"#!/bin/sh\necho one\n").await?;
    let harness = fixture.harness()?;
    assert!(fixture.installer.verify().await.differences.is_empty());
    let modified = std::fs::metadata(&harness)?.modified()?;
    let mut file = std::fs::File::options().write(true).open(&harness)?;
    file.write_all(b"H")?;
    file.set_modified(modified)?;
    drop(file);
    let report = fixture.installer.verify().await;
    assert_eq!(report.differences.len(), 1, "{:?}", report.differences);
    assert!(
        report.differences[0].contains("SHA-256"),
        "{:?}",
        report.differences
    );
    // verify changed nothing: the damage is still there for the next check to see.
    assert_eq!(std::fs::read(&harness)?.first(), Some(&b'H'));
    Ok(())
}

/// What only `verify` finds, `ensure_verified` (`doctor --install`) repairs; `ensure` (a
/// launch) trusts it.
#[tokio::test]
async fn a_flip_with_its_mtime_restored_is_repaired_by_ensure_verified() -> TestResult {
    let fixture = Installed::new(b"#!/bin/sh\necho three\n").await?;
    let harness = fixture.harness()?;
    let modified = std::fs::metadata(&harness)?.modified()?;
    let mut file = std::fs::File::options().write(true).open(&harness)?;
    file.write_all(b"H")?;
    file.set_modified(modified)?;
    drop(file);
    let reused = fixture.installer.ensure().await?;
    assert_eq!(reused.outcome, InstallOutcome::Reused);
    assert_eq!(fixture.host.hits.load(Ordering::SeqCst), 1);
    let report = fixture.installer.ensure_verified().await?;
    assert!(
        matches!(&report.outcome, InstallOutcome::Repaired { why } if why.contains("SHA-256")),
        "{:?}",
        report.outcome
    );
    assert_eq!(fixture.host.hits.load(Ordering::SeqCst), 2);
    assert!(fixture.installer.verify().await.differences.is_empty());
    let again = fixture.installer.ensure_verified().await?;
    assert_eq!(again.outcome, InstallOutcome::Reused);
    assert_eq!(fixture.host.hits.load(Ordering::SeqCst), 2);
    Ok(())
}

#[tokio::test]
async fn a_changed_mtime_makes_the_quick_check_hash_and_repair() -> TestResult {
    let fixture = Installed::new(b"#!/bin/sh\necho two\n").await?;
    let harness = fixture.harness()?;
    let mut file = std::fs::File::options().write(true).open(&harness)?;
    file.write_all(b"H")?;
    drop(file);
    let report = fixture.installer.ensure().await?;
    assert!(
        matches!(report.outcome, InstallOutcome::Repaired { .. }),
        "{:?}",
        report.outcome
    );
    assert_eq!(fixture.host.hits.load(Ordering::SeqCst), 2);
    assert!(fixture.installer.verify().await.differences.is_empty());
    Ok(())
}

#[tokio::test]
async fn nothing_is_fetched_or_written_before_ensure() -> TestResult {
    let bytes = archive(b"#!/bin/sh\n")?;
    let host = serve(bytes.clone()).await?;
    let root = tempfile::tempdir()?;
    let cache = root.path().join("cache");
    let cmd = format!("./{}", required_members(current_platform()?)[0]);
    let installer = Installer::new(options_for(&cache, index_for(&host.url, &cmd)?, &bytes))?;
    assert!(!cache.exists());
    assert_eq!(host.hits.load(Ordering::SeqCst), 0);
    drop(installer);
    Ok(())
}

#[tokio::test]
async fn a_launch_command_outside_the_archive_root_is_refused() -> TestResult {
    let bytes = archive(b"#!/bin/sh\n")?;
    let host = serve(bytes.clone()).await?;
    let cache = tempfile::tempdir()?;
    let harness = required_members(current_platform()?)[1];
    for cmd in [
        "../agy_acp_server.par",
        "../x",
        "sub/x",
        "/bin/sh",
        "./sub/agy_acp_server.par",
        "./other",
        harness,
    ] {
        let installer = Installer::new(options_for(
            cache.path(),
            index_for(&host.url, cmd)?,
            &bytes,
        ))?;
        let result = installer.ensure().await;
        assert!(
            matches!(result, Err(InstallError::BadLaunchCommand(_))),
            "{cmd}: {result:?}"
        );
    }
    assert_eq!(
        host.hits.load(Ordering::SeqCst),
        0,
        "nothing may be fetched for a bad cmd"
    );
    Ok(())
}

#[test]
fn an_empty_or_relative_cache_folder_is_refused_up_front() {
    for root in ["", "cache", "./cache"] {
        let options = InstallOptions {
            cache_dir: Some(root.into()),
            ..InstallOptions::default()
        };
        let result = Installer::new(options);
        assert!(
            matches!(result, Err(InstallError::BadCacheDir(_))),
            "{root:?}: {result:?}"
        );
    }
}

/// A receipt whose launch line names another file than the server (a listed sibling, a
/// path out of the install) is not launched: the install is made again.
#[tokio::test]
async fn a_receipt_launching_another_file_is_repaired() -> TestResult {
    let fixture = Installed::new(b"#!/bin/sh\necho five\n").await?;
    let current = fixture.cache.path().join(CURRENT_DIR);
    let [server, harness] = required_members(current_platform()?);
    let original = std::fs::read_to_string(current.join(RECEIPT_FILE))?;
    let tampered = [
        (
            format!("\"cmd\": \"{server}\""),
            format!("\"cmd\": \"{harness}\""),
        ),
        (
            format!("\"cmd\": \"{server}\""),
            "\"cmd\": \"../../x\"".to_owned(),
        ),
        (
            format!("\"harness\": \"{harness}\""),
            format!("\"harness\": \"{server}\""),
        ),
    ];
    for (from, to) in tampered {
        assert!(original.contains(&from), "{from} not in the receipt");
        let changed = original.replace(&from, &to);
        std::fs::write(current.join(RECEIPT_FILE), changed)?;
        let report = fixture.installer.ensure().await?;
        match report.outcome {
            InstallOutcome::Repaired { why } => {
                assert!(why.contains("launch line"), "{to}: {why}")
            }
            other => return Err(format!("{to}: expected a repair, got {other:?}").into()),
        }
        assert_eq!(report.server.command, current.join(server));
    }
    Ok(())
}

#[test]
fn a_malformed_override_is_refused_up_front() {
    let options = InstallOptions {
        sha256_override: Some("xyz".into()),
        cache_dir: Some(std::env::temp_dir()),
        ..InstallOptions::default()
    };
    assert!(matches!(
        Installer::new(options),
        Err(InstallError::BadDigest(_))
    ));
}

/// A whole-second mtime change (same nanoseconds) still changes the stat identity.
#[tokio::test]
async fn a_flip_one_second_later_is_found_at_launch() -> TestResult {
    let fixture = Installed::new(b"#!/bin/sh\necho three\n").await?;
    let harness = fixture.harness()?;
    let modified = std::fs::metadata(&harness)?.modified()?;
    let mut file = std::fs::File::options().write(true).open(&harness)?;
    file.write_all(b"H")?;
    file.set_modified(modified + std::time::Duration::from_secs(1))?;
    drop(file);
    let report = fixture.installer.ensure().await?;
    assert!(
        matches!(report.outcome, InstallOutcome::Repaired { .. }),
        "{:?}",
        report.outcome
    );
    Ok(())
}

#[tokio::test]
async fn a_file_the_receipt_does_not_list_is_found_at_launch() -> TestResult {
    let fixture = Installed::new(b"#!/bin/sh\necho four\n").await?;
    std::fs::write(
        fixture
            .cache
            .path()
            .join(CURRENT_DIR)
            .join("sitecustomize.py"),
        b"evil",
    )?;
    let report = fixture.installer.ensure().await?;
    match report.outcome {
        InstallOutcome::Repaired { why } => assert!(why.contains("sitecustomize.py"), "{why}"),
        other => return Err(format!("expected a repair, got {other:?}").into()),
    }
    assert!(
        !fixture
            .cache
            .path()
            .join(CURRENT_DIR)
            .join("sitecustomize.py")
            .exists()
    );
    Ok(())
}

#[tokio::test]
async fn a_receipt_of_many_files_is_read_and_an_oversized_one_refused() -> TestResult {
    let [server, harness] = required_members(current_platform()?);
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .system(zip::System::Unix)
        .unix_permissions(0o755);
    for name in [server, harness] {
        zip.start_file(name, options)?;
        zip.write_all(b"#!/bin/sh\n")?;
    }
    for n in 0..40 {
        zip.start_file(format!("runtime/lib{n:02}.so"), options)?;
        zip.write_all(&[n as u8; 16])?;
    }
    let bytes = zip.finish()?.into_inner();
    let host = serve(bytes.clone()).await?;
    let cache = tempfile::tempdir()?;
    let installer = Installer::new(options_for(
        cache.path(),
        index_for(&host.url, &format!("./{server}"))?,
        &bytes,
    ))?;
    installer.ensure().await?;
    let current = cache.path().join(CURRENT_DIR);
    assert!(std::fs::metadata(current.join(RECEIPT_FILE))?.len() > 4096);
    assert_eq!(Receipt::read(&current)?.files.len(), 42);
    assert_eq!(installer.ensure().await?.outcome, InstallOutcome::Reused);
    let text = std::fs::read_to_string(current.join(RECEIPT_FILE))?;
    let padded_to = |size: usize| format!("{text}{}", " ".repeat(size - text.len()));
    std::fs::write(current.join(RECEIPT_FILE), padded_to(1_048_576))?;
    assert_eq!(
        Receipt::read(&current)?.files.len(),
        42,
        "a receipt of exactly 1 MiB"
    );
    std::fs::write(current.join(RECEIPT_FILE), padded_to(1_048_577))?;
    assert!(
        Receipt::read(&current).is_err(),
        "a receipt over 1 MiB was read"
    );
    Ok(())
}

/// Asserts that `ensure` refused the archive as not matching `pin`.
fn refused_by(ensured: Result<InstallReport, InstallError>, pin: &str) {
    assert!(
        matches!(&ensured, Err(InstallError::DigestMismatch { source_of_pin, .. }) if *source_of_pin == pin),
        "expected a digest mismatch against {pin}: {ensured:?}"
    );
}

/// B03: an install is reused only under the digest it was checked against. Made under an
/// override, it is not reused once the override is gone (the launch downloads again and the
/// archive fails the built-in pin), nor under another override; `verify` names the digest.
#[tokio::test]
async fn an_install_is_reused_only_under_the_digest_in_force() -> TestResult {
    let installed = Installed::new(b"#!/bin/sh\n").await?;
    let cmd = format!("./{}", required_members(current_platform()?)[0]);
    let index = index_for(&installed.host.url, &cmd)?;
    let with = |sha256_override: Option<String>| InstallOptions {
        sha256_override,
        ..options_for(installed.cache.path(), index.clone(), b"")
    };
    let pinned = Installer::new(with(None))?;
    let report = pinned.verify().await;
    assert!(
        report
            .differences
            .iter()
            .any(|d| d.contains("the built-in 1.3.0 pin")),
        "{:?}",
        report.differences
    );
    refused_by(pinned.ensure().await, "the built-in 1.3.0 pin");
    assert_eq!(
        installed.host.hits.load(Ordering::SeqCst),
        2,
        "no download: the install was reused"
    );
    let other = Installer::new(with(Some("f".repeat(64))))?;
    refused_by(other.ensure().await, "the --sha256 override");
    assert_eq!(installed.host.hits.load(Ordering::SeqCst), 3);
    // The install in place is still the first one's, and its own override reuses it.
    assert_eq!(
        installed.installer.ensure().await?.outcome,
        InstallOutcome::Reused
    );
    Ok(())
}

/// A cache whose disk has too little room is refused before the archive's body is read:
/// the error names both figures, no `.part` is left, nothing is published, and the one
/// request made is the one whose Content-Length set the need. With room, it installs.
#[tokio::test]
async fn too_little_free_space_is_refused_before_the_download() -> TestResult {
    let bytes = archive(b"#!/bin/sh\n")?;
    let host = serve(bytes.clone()).await?;
    let cache = tempfile::tempdir()?;
    let cmd = format!("./{}", required_members(current_platform()?)[0]);
    let needed = needed_for(Some(bytes.len() as u64));
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = asked.clone();
    let free = |available: u64| {
        let seen = seen.clone();
        FreeSpaceProbe(Arc::new(move |dir: &std::path::Path| {
            if let Ok(mut seen) = seen.lock() {
                seen.push(dir.to_path_buf());
            }
            Ok(available)
        }))
    };
    let index = index_for(&host.url, &cmd)?;
    let options = |available| InstallOptions {
        free_space: Some(free(available)),
        ..options_for(cache.path(), index.clone(), &bytes)
    };
    let refused = Installer::new(options(needed - 1))?.ensure().await;
    let Err(error) = refused else {
        return Err("one byte short of the need was not refused".into());
    };
    assert_eq!(error.reason(), "insufficient_space", "{error}");
    let text = error.to_string();
    assert!(text.contains(&format!("({needed} bytes")), "{text}");
    assert!(
        text.contains(&format!("({} bytes) free", needed - 1)),
        "{text}"
    );
    assert!(!cache.path().join(PART_FILE).exists(), "a .part was left");
    assert!(!cache.path().join(CURRENT_DIR).exists());
    assert_eq!(host.hits.load(Ordering::SeqCst), 1, "it was retried");
    assert_eq!(
        asked.lock().map_err(|_| "poisoned")?.as_slice(),
        [cache.path().to_path_buf()],
        "the cache's own disk is asked"
    );
    let installed = Installer::new(options(needed))?.ensure().await?;
    assert_eq!(installed.outcome, InstallOutcome::Installed);
    Ok(())
}
