//! Provisioning (C65–C69, B03): the adapter installs, verifies and repairs the pinned
//! 1.3.0 server itself, the first time a turn needs it and never earlier (nothing is
//! downloaded when this crate is built or installed).
//!
//! [`Installer::ensure`] checks the cache at every launch (`receipt`'s quick check).
//! When the install is missing, partial or corrupt it takes the cache's lock, checks
//! again, and installs: the agent index entry (`agent_index`) and its launch command, which
//! must be the archive's server member (`launch`), an HTTPS download hashed in one pass
//! (`download`), the pinned digest, a validated extraction into a staging directory
//! (`archive`), the receipt, and one atomic rename (`cache`), each step reported
//! (`InstallEvent::Step`); before the download, the cache's disk must have room for the
//! archive and its unpacked files (`space`). A second failure of the check after that is an
//! error. What the check cannot cover: a file changed after it and before the exec runs as
//! it is; the next launch's check finds it and installs again (README, "Provisioning").

mod agent_index;
mod archive;
mod cache;
mod download;
mod error;
mod launch;
mod options;
mod platform;
mod receipt;
mod size;
mod space;

use std::path::{Path, PathBuf};

pub use agent_index::{BUILTIN_ENTRY, BinaryTarget, select_target};
pub use cache::{CURRENT_DIR, LOCK_FILE, PART_FILE, default_cache_dir};
pub use error::InstallError;
pub use options::{
    AgentIndexSource, ArchiveLimits, InstallEvent, InstallOptions, InstallStep, ProgressSink,
};
pub use platform::{
    AGENT_ID, PINNED_ARCHIVE_SHA256, PINNED_VERSION, current_platform, pinned_digest,
    required_members,
};
pub use receipt::{FileRecord, RECEIPT_FILE, Receipt};
pub use size::format_bytes;
pub use space::{
    AvailableBytes, FreeSpaceProbe, PINNED_ARCHIVE_BYTES, UNPACKED_FACTOR, needed_for,
};

use cache::{CacheLayout, CacheLock};
use receipt::{Depth, ReceiptHead};

/// The variable that tells the server where its harness is.
pub const HARNESS_VARIABLE: &str = "ANTIGRAVITY_HARNESS_PATH";

/// A verified install, ready to launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledServer {
    /// The server executable.
    pub command: PathBuf,
    /// Its arguments (the agent index entry's `args`).
    pub args: Vec<String>,
    /// The variables to set: the agent index entry's `env` and `ANTIGRAVITY_HARNESS_PATH`.
    pub env: Vec<(String, String)>,
    /// The install's folder.
    pub dir: PathBuf,
    /// The SHA-256 of the archive it was installed from (from the receipt): a pooled
    /// process is reused only under the same build.
    pub archive_sha256: String,
}

/// What [`Installer::ensure`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallOutcome {
    /// The install passed its check and was used as it was.
    Reused,
    /// There was no install; one was made.
    Installed,
    /// The install was partial or corrupt (`why`); it was made again.
    Repaired {
        /// What the check found.
        why: String,
    },
}

/// A usable install and how it came to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallReport {
    /// The install.
    pub server: InstalledServer,
    /// What was done.
    pub outcome: InstallOutcome,
}

/// The result of a full verification: every difference found (none means verified).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// The install's folder.
    pub dir: PathBuf,
    /// What differs from the receipt, or what is missing or left over.
    pub differences: Vec<String>,
}

/// Installs and checks the pinned server in one cache folder.
#[derive(Debug)]
pub struct Installer {
    options: InstallOptions,
    layout: CacheLayout,
    platform: &'static str,
    /// One install at a time inside this process (the file lock covers other processes).
    gate: tokio::sync::Mutex<()>,
}

impl Installer {
    /// An installer for this machine's platform, in `options.cache_dir` or the default.
    pub fn new(options: InstallOptions) -> Result<Self, InstallError> {
        let platform = current_platform()?;
        let root = match &options.cache_dir {
            Some(dir) => dir.clone(),
            None => default_cache_dir(platform)?,
        };
        cache::check_cache_root(&root)?;
        if let Some(digest) = &options.sha256_override {
            platform::parse_digest(digest)?;
        }
        Ok(Self {
            options,
            layout: CacheLayout::new(root),
            platform,
            gate: tokio::sync::Mutex::new(()),
        })
    }

    /// The archive digest in force: the `sha256` override, else the built-in pin (B03).
    /// A download is checked against it, and only an install made from an archive of this
    /// digest is reused.
    fn in_force(&self) -> Result<DigestInForce, InstallError> {
        Ok(match &self.options.sha256_override {
            Some(digest) => DigestInForce {
                digest: Some(platform::parse_digest(digest)?),
                source: "the --sha256 override",
                recorded_as: "override",
            },
            None => DigestInForce {
                digest: pinned_digest(self.platform).map(str::to_owned),
                source: "the built-in 1.3.0 pin",
                recorded_as: "pinned",
            },
        })
    }

    /// The cache folder.
    pub fn cache_dir(&self) -> &Path {
        self.layout.root()
    }

    /// The platform key this installer installs for.
    pub fn platform(&self) -> &'static str {
        self.platform
    }

    /// Makes sure a verified install is in place and returns it: the quick check first,
    /// and when it fails, an install under the cache's lock (C67, C68).
    pub async fn ensure(&self) -> Result<InstallReport, InstallError> {
        self.ensure_at(Depth::Quick).await
    }

    /// As [`ensure`](Self::ensure), but every file is hashed to decide (`doctor
    /// --install`): a file changed with its size, mode and identity kept, which the quick
    /// check trusts and [`verify`](Self::verify) finds, is installed again too.
    pub async fn ensure_verified(&self) -> Result<InstallReport, InstallError> {
        self.ensure_at(Depth::Full).await
    }

    /// `ensure` with the check that decides whether the install is reused at `depth`.
    async fn ensure_at(&self, depth: Depth) -> Result<InstallReport, InstallError> {
        let _gate = self.gate.lock().await;
        if let Ok(server) = self.inspect(depth).await {
            return Ok(self.reused(server));
        }
        let layout = self.layout.clone();
        let lock = match layout.try_lock()? {
            Some(lock) => lock,
            None => {
                self.options.report(InstallEvent::WaitingForLock);
                blocking(move || layout.lock()).await?
            }
        };
        // Another process may have installed while this one waited for the lock.
        let why = match self.inspect(depth).await {
            Ok(server) => return Ok(self.reused(server)),
            Err(why) => why,
        };
        tracing::debug!("the server install is missing or broken; installing");
        let had_anything = std::fs::symlink_metadata(self.layout.current()).is_ok()
            || !self.layout.leftovers().is_empty();
        if had_anything {
            self.options
                .report(InstallEvent::Repairing { why: why.clone() });
        }
        self.install(&lock, had_anything).await?;
        drop(lock);
        let server = self
            .inspect(Depth::Quick)
            .await
            .map_err(InstallError::StillCorrupt)?;
        let outcome = if had_anything {
            InstallOutcome::Repaired { why }
        } else {
            InstallOutcome::Installed
        };
        Ok(InstallReport { server, outcome })
    }

    /// The check every launch runs (the receipt, its archive digest the one in force, each
    /// file's size, mode and identity, the launch line; no hashing), changing nothing: the
    /// install, or what the check found first.
    pub async fn check(&self) -> Result<InstalledServer, String> {
        self.inspect(Depth::Quick).await
    }

    /// Hashes every installed file and lists every difference; changes nothing.
    pub async fn verify(&self) -> VerifyReport {
        let layout = self.layout.clone();
        let platform = self.platform;
        let in_force = self.in_force();
        let differences = blocking(move || {
            Ok::<_, InstallError>(
                match inspect_at(&layout, platform, &in_force?, Depth::Full) {
                    Ok(_) => Vec::new(),
                    Err(found) => found,
                },
            )
        })
        .await
        .unwrap_or_else(|error| vec![error.to_string()]);
        VerifyReport {
            dir: self.layout.current(),
            differences,
        }
    }

    fn reused(&self, server: InstalledServer) -> InstallReport {
        self.options.report(InstallEvent::Reused);
        InstallReport {
            server,
            outcome: InstallOutcome::Reused,
        }
    }

    /// The quick or full check, off the async threads; the first difference on failure.
    async fn inspect(&self, depth: Depth) -> Result<InstalledServer, String> {
        let layout = self.layout.clone();
        let platform = self.platform;
        let in_force = self.in_force().map_err(|error| error.to_string())?;
        let check = move || inspect_at(&layout, platform, &in_force, depth);
        match tokio::task::spawn_blocking(check).await {
            Ok(result) => result.map_err(|found| found.join("; ")),
            Err(_) => Err("the check did not complete".to_owned()),
        }
    }

    /// Downloads, checks, extracts and publishes. Only under the lock.
    async fn install(&self, lock: &CacheLock, repairing: bool) -> Result<(), InstallError> {
        self.layout.clear_leftovers(lock)?;
        let target = self.target().await?;
        let members = required_members(self.platform);
        let cmd = launch::launch_member(&target.cmd, members[0])?;
        let part = self.layout.part();
        let downloaded = download::download_archive(&target.archive, &part, &self.options).await;
        let downloaded = match downloaded {
            Ok(done) => done,
            Err(error) => {
                let _removed = cache::remove_any(&part);
                return Err(error);
            }
        };
        self.options.report(InstallEvent::Step(InstallStep::Verify));
        let checked = self.check_digest(&downloaded.sha256, target.sha256.as_deref());
        let checked_against = match checked {
            Ok(against) => against,
            Err(error) => {
                let _removed = cache::remove_any(&part);
                return Err(error);
            }
        };
        let staging = self.layout.new_staging(lock)?;
        let head = ReceiptHead {
            version: PINNED_VERSION.to_owned(),
            platform: self.platform.to_owned(),
            archive_url: target.archive.clone(),
            archive_sha256: downloaded.sha256,
            digest_checked_against: checked_against.to_owned(),
            cmd,
            args: target.args.clone(),
            env: target.env.clone(),
            harness: members[1].to_owned(),
        };
        let result = self.stage(&part, &staging, head).await;
        let _removed = cache::remove_any(&part);
        if let Err(error) = result {
            let _removed = cache::remove_any(&staging);
            return Err(error);
        }
        self.options.report(InstallEvent::Step(InstallStep::Rename));
        if let Some(retired) = self.layout.publish(&staging, lock)? {
            self.options.report(InstallEvent::Step(InstallStep::Retire));
            // The new install is in place: a replaced one that cannot go yet (on Windows,
            // a pooled server still runs from it) stays a leftover, swept by the next
            // install, and fails nothing.
            if let Err(error) = cache::remove_any(&retired) {
                tracing::debug!(%error, "the replaced install stays until its server ends");
            }
        }
        self.options.report(InstallEvent::Installed {
            repaired: repairing,
        });
        Ok(())
    }

    /// Extracts into `staging` and writes the receipt there.
    async fn stage(
        &self,
        part: &Path,
        staging: &Path,
        head: ReceiptHead,
    ) -> Result<(), InstallError> {
        let (part, staging) = (part.to_path_buf(), staging.to_path_buf());
        let limits = self.options.limits;
        let options = self.options.clone();
        let members = required_members(self.platform);
        blocking(move || {
            let mut on_file = |path: &str| {
                options.report(InstallEvent::Extracting {
                    path: path.to_owned(),
                })
            };
            let files = archive::extract_checked(&part, &staging, &members, &limits, &mut on_file)?;
            let receipt = receipt::Receipt::build(head, &staging, &files)?;
            options.report(InstallEvent::Step(InstallStep::Receipt));
            write_receipt(&staging, &receipt)
        })
        .await
    }

    /// The agent index's binary target for this platform.
    async fn target(&self) -> Result<BinaryTarget, InstallError> {
        let document = match &self.options.agent_index {
            AgentIndexSource::Builtin => BUILTIN_ENTRY.to_owned(),
            AgentIndexSource::Document(text) => text.clone(),
            AgentIndexSource::Url(url) => download::fetch_agent_index(url, &self.options).await?,
        };
        select_target(&document, self.platform)
    }

    /// Checks the archive digest against the override or the pin, and against the
    /// agent index's `sha256`; returns what it was checked against.
    fn check_digest(
        &self,
        actual: &str,
        from_index: Option<&str>,
    ) -> Result<&'static str, InstallError> {
        let mismatch = |expected: &str, source_of_pin| InstallError::DigestMismatch {
            actual: actual.to_owned(),
            expected: expected.to_owned(),
            source_of_pin,
        };
        if let Some(expected) = from_index
            && expected != actual
        {
            return Err(mismatch(expected, "the registry's sha256"));
        }
        let in_force = self.in_force()?;
        match in_force.digest {
            Some(expected) if expected == actual => Ok(in_force.recorded_as),
            Some(expected) => Err(mismatch(&expected, in_force.source)),
            None => Err(mismatch("(none)", in_force.source)),
        }
    }
}

/// Runs blocking cache work on the blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, InstallError> + Send + 'static,
) -> Result<T, InstallError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| InstallError::StillCorrupt("the install task did not complete".to_owned()))?
}

/// The archive digest an install must come from to be reused, and where it comes from.
#[derive(Debug)]
struct DigestInForce {
    /// Lowercase hex; `None` when this platform has no pin (nothing can be reused).
    digest: Option<String>,
    /// What an error names: the override or the built-in pin.
    source: &'static str,
    /// What the receipt records an install was checked against (`override`, `pinned`).
    recorded_as: &'static str,
}

/// The check itself: leftovers, receipt (its archive digest the one in force), files,
/// launch line. A receipt edited by hand to claim the digest in force is not detected: that
/// needs a manifest of the real archive's files (B03's row says so).
fn inspect_at(
    layout: &CacheLayout,
    platform: &str,
    in_force: &DigestInForce,
    depth: Depth,
) -> Result<InstalledServer, Vec<String>> {
    let leftovers = layout.leftovers();
    if !leftovers.is_empty() {
        return Err(leftovers
            .iter()
            .map(|p| {
                let name = p.file_name().unwrap_or_default().to_string_lossy();
                format!("`{name}` was left by an interrupted install")
            })
            .collect());
    }
    let dir = layout.current();
    let receipt = Receipt::read(&dir).map_err(|why| vec![why])?;
    if receipt.version != PINNED_VERSION || receipt.platform != platform {
        return Err(vec![format!(
            "the receipt is for {} on {}",
            receipt.version, receipt.platform
        )]);
    }
    if in_force.digest.as_deref() != Some(receipt.archive_sha256.as_str()) {
        return Err(vec![format!(
            "the install came from an archive that {} does not name",
            in_force.source
        )]);
    }
    let differences = receipt::check(&dir, &receipt, depth);
    if !differences.is_empty() {
        return Err(differences);
    }
    // A receipt is the adapter's own file, but it is read from disk: its launch line
    // must still be the archive's server and harness, listed and checked above.
    let [server, harness] = required_members(platform);
    if receipt.cmd != server || receipt.harness != harness {
        return Err(vec![
            "the receipt's launch line is not the archive's server and harness".to_owned(),
        ]);
    }
    let listed = |name: &str| receipt.files.iter().any(|f| f.path == name);
    if !listed(&receipt.cmd) || !listed(&receipt.harness) {
        return Err(vec![
            "the receipt's launch line names a file it does not list".to_owned(),
        ]);
    }
    let mut env: Vec<(String, String)> = receipt.env.clone().into_iter().collect();
    env.push((
        HARNESS_VARIABLE.to_owned(),
        dir.join(&receipt.harness).display().to_string(),
    ));
    Ok(InstalledServer {
        command: dir.join(&receipt.cmd),
        args: receipt.args.clone(),
        env,
        dir,
        archive_sha256: receipt.archive_sha256.clone(),
    })
}

/// Writes the receipt (new file, fsynced) and syncs the staging directory.
fn write_receipt(staging: &Path, receipt: &Receipt) -> Result<(), InstallError> {
    use std::io::Write;
    let path = staging.join(RECEIPT_FILE);
    let text = receipt.to_json()?;
    let mut file = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| InstallError::io("create", &path, &e))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| InstallError::io("write", &path, &e))?;
    cache::sync_dir(staging)
}

#[cfg(test)]
pub(crate) mod tests;
