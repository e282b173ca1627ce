//! The cache's layout on disk and the operations that keep it whole: the advisory lock
//! held across download and publish, the leftovers an interrupted install leaves
//! (`*.part` downloads, `staging-*` and `retired-*` directories), and the publish step
//! (rename the staged install into `current/`, fsync the parent).
//!
//! ```text
//! <cache>/install.lock        advisory lock (flock); held while installing
//! <cache>/current/            the published install: the archive's files + receipt.json
//! <cache>/archive.zip.part    a download in progress (a leftover if nobody holds the lock)
//! <cache>/staging-<uuid>/     an extraction in progress (same)
//! <cache>/retired-<uuid>/     a replaced install being removed (same)
//! ```

use std::fs::File;
use std::path::{Path, PathBuf};

use super::error::InstallError;
use super::platform::PINNED_VERSION;

/// The published install's folder name.
pub const CURRENT_DIR: &str = "current";
/// The download's file name while it is in progress.
pub const PART_FILE: &str = "archive.zip.part";
/// The lock file's name.
pub const LOCK_FILE: &str = "install.lock";
const STAGING_PREFIX: &str = "staging-";
const RETIRED_PREFIX: &str = "retired-";

/// The per-user default cache folder for `platform`: the platform's cache directory +
/// `antigravity-acp/1.3.0/<platform>`, from this process's environment.
pub fn default_cache_dir(platform: &str) -> Result<PathBuf, InstallError> {
    cache_dir_for(std::env::consts::OS, platform, &|name| {
        std::env::var_os(name)
    })
}

/// The default cache folder on `os` (as Rust names it), reading variables with `var`:
/// `$XDG_CACHE_HOME`, else `$HOME/.cache` (Linux and other Unixes), `$HOME/Library/Caches`
/// (macOS), `%LOCALAPPDATA%` (Windows). A variable that is unset, empty or relative is
/// not used (the XDG rule: a relative path there is invalid and ignored).
pub(crate) fn cache_dir_for(
    os: &str,
    platform: &str,
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<PathBuf, InstallError> {
    let var = |name: &str| {
        var(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let base = match os {
        "macos" => var("HOME").map(|h| h.join("Library/Caches")),
        "windows" => var("LOCALAPPDATA"),
        _ => var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|h| h.join(".cache"))),
    };
    let base = base.ok_or(InstallError::NoCacheDir)?;
    Ok(base
        .join("antigravity-acp")
        .join(PINNED_VERSION)
        .join(platform))
}

/// Refuses a cache folder that is empty or relative: an empty path would install into
/// whatever the current directory happens to be (once, a crate's source folder), and a
/// relative one moves with it.
pub(crate) fn check_cache_root(root: &Path) -> Result<(), InstallError> {
    if root.as_os_str().is_empty() {
        return Err(InstallError::BadCacheDir("the path is empty".to_owned()));
    }
    if !root.is_absolute() {
        return Err(InstallError::BadCacheDir(format!(
            "`{}` is relative; give an absolute path",
            root.display()
        )));
    }
    Ok(())
}

/// One cache folder.
#[derive(Debug, Clone)]
pub(crate) struct CacheLayout {
    root: PathBuf,
}

/// The advisory lock on a cache; released when dropped (or when its process dies).
#[derive(Debug)]
pub(crate) struct CacheLock {
    _file: File,
}

impl CacheLayout {
    pub(crate) fn new(root: PathBuf) -> Self {
        Self { root }
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    pub(crate) fn current(&self) -> PathBuf {
        self.root.join(CURRENT_DIR)
    }

    pub(crate) fn part(&self) -> PathBuf {
        self.root.join(PART_FILE)
    }

    /// Takes the cache's lock, waiting for another installer to finish. Blocking.
    pub(crate) fn lock(&self) -> Result<CacheLock, InstallError> {
        let (file, path) = self.lock_file()?;
        file.lock()
            .map_err(|e| InstallError::io("lock", &path, &e))?;
        Ok(CacheLock { _file: file })
    }

    /// Takes the cache's lock if nobody holds it.
    pub(crate) fn try_lock(&self) -> Result<Option<CacheLock>, InstallError> {
        let (file, path) = self.lock_file()?;
        match file.try_lock() {
            Ok(()) => Ok(Some(CacheLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(InstallError::io("lock", &path, &e)),
        }
    }

    fn lock_file(&self) -> Result<(File, PathBuf), InstallError> {
        std::fs::create_dir_all(&self.root)
            .map_err(|e| InstallError::io("create the cache", &self.root, &e))?;
        let path = self.root.join(LOCK_FILE);
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| InstallError::io("open the lock", &path, &e))?;
        Ok((file, path))
    }

    /// What an interrupted install left behind.
    pub(crate) fn leftovers(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                name.ends_with(".part")
                    || name.starts_with(STAGING_PREFIX)
                    || name.starts_with(RETIRED_PREFIX)
            })
            .map(|entry| entry.path())
            .collect()
    }

    /// Removes every leftover. Only under the lock. A `retired-*` install that cannot be
    /// removed yet (on Windows, a server still runs from it) is left for a later sweep:
    /// nothing reads it again.
    pub(crate) fn clear_leftovers(&self, _lock: &CacheLock) -> Result<(), InstallError> {
        for path in self.leftovers() {
            match remove_any(&path) {
                Err(error) if is_retired(&path) => {
                    tracing::debug!(%error, "a replaced install stays until its server ends");
                }
                other => other?,
            }
        }
        Ok(())
    }

    /// A fresh, empty staging directory.
    pub(crate) fn new_staging(&self, _lock: &CacheLock) -> Result<PathBuf, InstallError> {
        let path = self
            .root
            .join(format!("{STAGING_PREFIX}{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir(&path).map_err(|e| InstallError::io("create", &path, &e))?;
        Ok(path)
    }

    /// Publishes `staging` as `current/`; returns the `retired-*` directory the replaced
    /// install was renamed to, for the caller to remove (a leftover until it does).
    pub(crate) fn publish(
        &self,
        staging: &Path,
        _lock: &CacheLock,
    ) -> Result<Option<PathBuf>, InstallError> {
        let current = self.current();
        let retired = self
            .root
            .join(format!("{RETIRED_PREFIX}{}", uuid::Uuid::new_v4().simple()));
        let had_current = std::fs::symlink_metadata(&current).is_ok();
        if had_current {
            std::fs::rename(&current, &retired)
                .map_err(|e| InstallError::io("retire", &current, &e))?;
        }
        std::fs::rename(staging, &current)
            .map_err(|e| InstallError::io("publish", &current, &e))?;
        sync_dir(&self.root)?;
        Ok(had_current.then_some(retired))
    }
}

/// Whether `path` is a replaced install (`retired-*`).
fn is_retired(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with(RETIRED_PREFIX))
}

/// Removes a file or a whole directory tree (links are removed, never followed).
pub(crate) fn remove_any(path: &Path) -> Result<(), InstallError> {
    let result = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    };
    result.map_err(|e| InstallError::io("remove", path, &e))
}

/// Fsyncs a directory, so the names created or renamed in it are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), InstallError> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| InstallError::io("sync", dir, &e))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
