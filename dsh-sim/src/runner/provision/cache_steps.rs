//! The scenario's starting state: the agent index document it serves, the damage done to a
//! good install, and `dsh-sim install` processes run at once or killed mid-extraction or
//! at any install step.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use antigravity_acp::install::{
    BUILTIN_ENTRY, CURRENT_DIR, InstallOptions, PART_FILE, RECEIPT_FILE,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::scenario::{CacheStep, KillStep, RegistryKind};

/// How long an installer process may take to reach a point the runner waits for.
const INSTALLER_BOUND: Duration = Duration::from_secs(30);

/// The agent index document for `kind`, with `platform`'s archive at `archive_url`.
pub fn agent_index_document(
    kind: RegistryKind,
    platform: &str,
    archive_url: &str,
    sha256: Option<&str>,
) -> String {
    let mut entry: Value = serde_json::from_str(BUILTIN_ENTRY).unwrap_or(Value::Null);
    let target = &mut entry["distribution"]["binary"][platform];
    target["archive"] = archive_url.into();
    if let Some(digest) = sha256 {
        target["sha256"] = digest.into();
    }
    match kind {
        RegistryKind::Entry => {}
        RegistryKind::Index => {
            let other = json!({"id": "some-other-agent", "version": "2.0.0", "distribution": {}});
            return json!({"version": "1.0.0", "agents": [other, entry]}).to_string();
        }
        RegistryKind::NoPlatform => {
            if let Some(binaries) = entry["distribution"]["binary"].as_object_mut() {
                binaries.remove(platform);
            }
        }
        RegistryKind::OtherVersion => entry["version"] = "1.4.0".into(),
        RegistryKind::Malformed => target["cmd"] = 42.into(),
        RegistryKind::RemoteHttp => {
            target["archive"] = "http://archive.example.invalid/agy-acp-server-1.3.0.zip".into();
        }
    }
    entry.to_string()
}

/// Damages a good install in `cache`.
pub fn apply(step: &CacheStep, cache: &Path) -> Result<(), String> {
    let current = cache.join(CURRENT_DIR);
    let fail = |what: &str, e: std::io::Error| format!("cannot {what} in the cache: {e}");
    // Members are named as on Unix; on Windows the server and harness are `.exe`.
    let member = |name: &str| current.join(super::archive_builder::member_here(name));
    match step {
        CacheStep::FlipByte(name) => {
            let path = member(name);
            let mut bytes = std::fs::read(&path).map_err(|e| fail("read", e))?;
            let middle = bytes.len() / 2;
            let byte = bytes
                .get_mut(middle)
                .ok_or_else(|| format!("`{name}` is empty"))?;
            *byte ^= 0x01;
            std::fs::write(&path, bytes).map_err(|e| fail("write", e))
        }
        CacheStep::Truncate(name) => {
            let path = member(name);
            let size = std::fs::metadata(&path)
                .map_err(|e| fail("inspect", e))?
                .len();
            let file = std::fs::File::options()
                .write(true)
                .open(&path)
                .map_err(|e| fail("open", e))?;
            file.set_len(size / 2).map_err(|e| fail("truncate", e))
        }
        CacheStep::Remove(name) => {
            std::fs::remove_file(member(name)).map_err(|e| fail("remove", e))
        }
        CacheStep::RemoveExecBit(name) => remove_exec_bit(&member(name)),
        CacheStep::RemoveReceipt => {
            std::fs::remove_file(current.join(RECEIPT_FILE)).map_err(|e| fail("remove", e))
        }
        CacheStep::GarbleReceipt => {
            std::fs::write(current.join(RECEIPT_FILE), "{ not json").map_err(|e| fail("write", e))
        }
        CacheStep::StalePart => {
            std::fs::write(cache.join(PART_FILE), b"PK\x03\x04 half").map_err(|e| fail("write", e))
        }
        CacheStep::StaleStaging => {
            let staging = cache.join("staging-0123456789abcdef");
            std::fs::create_dir_all(&staging).map_err(|e| fail("create", e))?;
            std::fs::write(staging.join("agy_acp_server.par"), b"#!/bin/sh\n")
                .map_err(|e| fail("write", e))
        }
    }
}

/// `chmod a-x`: the mode changes, the inode, size, content and mtime do not.
#[cfg(unix)]
fn remove_exec_bit(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let fail = |what: &str, e: std::io::Error| format!("cannot {what} in the cache: {e}");
    let mode = std::fs::metadata(path)
        .map_err(|e| fail("inspect", e))?
        .permissions()
        .mode();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & !0o111))
        .map_err(|e| fail("chmod", e))
}

/// Windows has no execute bits: a scenario with this step is marked for Unix only.
#[cfg(not(unix))]
fn remove_exec_bit(path: &Path) -> Result<(), String> {
    Err(format!(
        "remove_exec_bit on {}: Windows has no execute bits (mark the scenario's platforms)",
        path.display()
    ))
}

/// How to run `dsh-sim install` against the scenario's agent index and cache.
pub struct InstallerCommand<'a> {
    /// The dsh-sim binary.
    pub program: &'a Path,
    /// The agent index URL (passed as `--registry`).
    pub index_url: String,
    /// The options the adapter gets (cache, pin, loopback).
    pub options: &'a InstallOptions,
}

impl InstallerCommand<'_> {
    fn spawn(&self, pause_at_file: Option<usize>) -> Result<Child, String> {
        self.spawn_with(pause_at_file, None)
    }

    fn spawn_with(
        &self,
        pause_at_file: Option<usize>,
        pause_at: Option<KillStep>,
    ) -> Result<Child, String> {
        let mut command = Command::new(self.program);
        command
            .arg("install")
            .arg("--registry")
            .arg(&self.index_url);
        if let Some(cache) = &self.options.cache_dir {
            command.arg("--cache").arg(cache);
        }
        if self.options.insecure_loopback {
            command.arg("--insecure-loopback");
        }
        if let Some(digest) = &self.options.sha256_override {
            command.arg("--sha256").arg(digest);
        }
        if let Some(n) = pause_at_file {
            command.arg("--pause-at-file").arg(n.to_string());
        }
        if let Some(step) = pause_at {
            command.arg("--pause-at").arg(step.as_str());
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start `dsh-sim install`: {e}"))
    }
}

/// Reads `child`'s stdout (or stderr) until a line contains `needle`, within the bound.
async fn wait_for_line(child: &mut Child, needle: &str, stderr: bool) -> Result<(), String> {
    let lines: Box<dyn tokio::io::AsyncRead + Unpin + Send> = if stderr {
        Box::new(child.stderr.take().ok_or("no stderr pipe")?)
    } else {
        Box::new(child.stdout.take().ok_or("no stdout pipe")?)
    };
    let mut lines = BufReader::new(lines).lines();
    let found = tokio::time::timeout(INSTALLER_BOUND, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains(needle) {
                return true;
            }
        }
        false
    })
    .await;
    // Keep draining, so the installer never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    match found {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!("the installer ended without printing `{needle}`")),
        Err(_) => Err(format!(
            "the installer did not print `{needle}` within {INSTALLER_BOUND:?}"
        )),
    }
}

/// Runs `count` installers at once: the first pauses mid-extraction until every other
/// one reports that it waits for the cache lock. Every one must exit 0.
pub async fn run_concurrent(command: &InstallerCommand<'_>, count: usize) -> Vec<String> {
    let mut failures = Vec::new();
    let mut first = match command.spawn(Some(2)) {
        Ok(child) => child,
        Err(error) => return vec![error],
    };
    if let Err(error) = wait_for_line(&mut first, "paused", false).await {
        return vec![format!("installer 1: {error}")];
    }
    let mut others = Vec::new();
    for n in 2..=count {
        match command.spawn(None) {
            Ok(mut child) => {
                if let Err(error) =
                    wait_for_line(&mut child, "waiting for the cache lock", true).await
                {
                    failures.push(format!("installer {n}: {error}"));
                }
                others.push(child);
            }
            Err(error) => failures.push(error),
        }
    }
    drop(first.stdin.take());
    for (n, child) in std::iter::once(first).chain(others).enumerate() {
        match tokio::time::timeout(INSTALLER_BOUND, child.wait_with_output()).await {
            Ok(Ok(output)) if output.status.success() => {}
            Ok(Ok(output)) => {
                failures.push(format!("installer {} exited with {}", n + 1, output.status))
            }
            Ok(Err(error)) => failures.push(format!("installer {}: {error}", n + 1)),
            Err(_) => failures.push(format!("installer {} did not finish", n + 1)),
        }
    }
    failures
}

/// Starts an installer, waits until it has written the first file, and kills it.
pub async fn run_killed(command: &InstallerCommand<'_>) -> Result<(), String> {
    let mut child = command.spawn(Some(2))?;
    wait_for_line(&mut child, "paused", false).await?;
    child
        .kill()
        .await
        .map_err(|e| format!("cannot kill the installer: {e}"))
}

/// Starts an installer, waits until it pauses at `step`, and kills it there.
pub async fn run_killed_at(command: &InstallerCommand<'_>, step: KillStep) -> Result<(), String> {
    let mut child = command.spawn_with(None, Some(step))?;
    wait_for_line(&mut child, "paused", false)
        .await
        .map_err(|e| format!("the installer to kill at `{}`: {e}", step.as_str()))?;
    child
        .kill()
        .await
        .map_err(|e| format!("cannot kill the installer: {e}"))
}
