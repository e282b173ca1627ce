//! The completeness receipt (C67): written last inside the staging directory, published
//! with it, and read at every launch. It records the version, platform, archive digest
//! and launch line, and every file's size, mode, SHA-256 and stat identity.
//!
//! Two depths of check: [`check_quick`] (every launch) compares each file's size, mode
//! and stat identity (inode, device, mtime) with the receipt and hashes only a file whose
//! identity changed; [`check_full`] (`--verify`) hashes every file. A receipt is not a
//! signature: it proves the cache is complete and unchanged, not who built the archive.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::archive::ExtractedFile;
use super::error::InstallError;

/// The receipt's file name inside an install.
pub const RECEIPT_FILE: &str = "receipt.json";
/// The receipt format this adapter writes and reads.
const FORMAT: u32 = 1;
/// The largest receipt read.
const MAX_RECEIPT_BYTES: u64 = 1024 * 1024;

/// A file's identity on disk when it was last hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// Inode number (0 where the platform has none).
    pub inode: u64,
    /// Device number (0 where the platform has none).
    pub device: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i128,
}

/// One installed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// Its path inside the install, `/`-separated.
    pub path: String,
    /// Its size.
    pub size: u64,
    /// Its permission bits.
    pub mode: u32,
    /// Its SHA-256, hex.
    pub sha256: String,
    /// Its identity when hashed.
    pub stamp: Stamp,
}

/// The receipt of a complete install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// The receipt format (1).
    pub format: u32,
    /// The server version.
    pub version: String,
    /// The registry platform key.
    pub platform: String,
    /// Where the archive came from.
    pub archive_url: String,
    /// The archive's SHA-256.
    pub archive_sha256: String,
    /// What the digest was checked against: `pinned` or `override`.
    pub digest_checked_against: String,
    /// The command to launch, relative to the install.
    pub cmd: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables the agent index entry sets.
    pub env: BTreeMap<String, String>,
    /// The harness file, relative to the install.
    pub harness: String,
    /// Every file of the install.
    pub files: Vec<FileRecord>,
}

/// The parts of a receipt that do not come from the files.
#[derive(Debug, Clone)]
pub(crate) struct ReceiptHead {
    pub(crate) version: String,
    pub(crate) platform: String,
    pub(crate) archive_url: String,
    pub(crate) archive_sha256: String,
    pub(crate) digest_checked_against: String,
    pub(crate) cmd: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) harness: String,
}

impl Receipt {
    /// Builds the receipt of the files just extracted into `dir`.
    pub(crate) fn build(
        head: ReceiptHead,
        dir: &Path,
        files: &[ExtractedFile],
    ) -> Result<Self, InstallError> {
        let files = files
            .iter()
            .map(|file| {
                let path = dir.join(&file.path);
                let meta = std::fs::symlink_metadata(&path)
                    .map_err(|e| InstallError::io("inspect", &path, &e))?;
                Ok(FileRecord {
                    path: file.path.clone(),
                    size: file.size,
                    mode: file.mode,
                    sha256: file.sha256.clone(),
                    stamp: stamp_of(&meta),
                })
            })
            .collect::<Result<Vec<_>, InstallError>>()?;
        Ok(Self {
            format: FORMAT,
            version: head.version,
            platform: head.platform,
            archive_url: head.archive_url,
            archive_sha256: head.archive_sha256,
            digest_checked_against: head.digest_checked_against,
            cmd: head.cmd,
            args: head.args,
            env: head.env,
            harness: head.harness,
            files,
        })
    }

    /// Reads the receipt of the install at `dir`, or says why it cannot be used.
    pub fn read(dir: &Path) -> Result<Self, String> {
        let path = dir.join(RECEIPT_FILE);
        let file = File::open(&path).map_err(|_| "the receipt is missing".to_owned())?;
        let mut text = String::new();
        file.take(MAX_RECEIPT_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|_| "the receipt cannot be read".to_owned())?;
        if text.len() as u64 > MAX_RECEIPT_BYTES {
            return Err("the receipt is larger than 1 MiB".to_owned());
        }
        let receipt: Self =
            serde_json::from_str(&text).map_err(|_| "the receipt is unparsable".to_owned())?;
        if receipt.format != FORMAT {
            return Err(format!("the receipt has format {}", receipt.format));
        }
        Ok(receipt)
    }

    /// The receipt as pretty JSON.
    pub(crate) fn to_json(&self) -> Result<String, InstallError> {
        serde_json::to_string_pretty(self)
            .map_err(|_| InstallError::StillCorrupt("cannot encode the receipt".to_owned()))
    }
}

/// The stat identity of a file.
fn stamp_of(meta: &std::fs::Metadata) -> Stamp {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            inode: meta.ino(),
            device: meta.dev(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        }
    }
    #[cfg(not(unix))]
    {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        Stamp {
            inode: 0,
            device: 0,
            mtime_ns,
        }
    }
}

#[cfg(unix)]
fn mode_of(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o777
}

#[cfg(not(unix))]
fn mode_of(_meta: &std::fs::Metadata) -> u32 {
    0
}

/// Hashes a whole file.
pub(crate) fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1024 * 1024];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(buffer.get(..n).unwrap_or_default());
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Which depth of check to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Depth {
    /// Size, mode and stat identity; hash only files whose identity changed.
    Quick,
    /// Hash every file.
    Full,
}

/// Checks the install at `dir` against its receipt; returns every difference found.
pub(crate) fn check(dir: &Path, receipt: &Receipt, depth: Depth) -> Vec<String> {
    let mut differences = Vec::new();
    let listed: BTreeSet<&str> = receipt.files.iter().map(|f| f.path.as_str()).collect();
    for record in &receipt.files {
        if let Some(difference) = check_file(dir, record, depth) {
            differences.push(difference);
        }
    }
    for extra in files_under(dir) {
        if extra != RECEIPT_FILE && !listed.contains(extra.as_str()) {
            differences.push(format!("`{extra}` is not in the receipt"));
        }
    }
    differences
}

fn check_file(dir: &Path, record: &FileRecord, depth: Depth) -> Option<String> {
    let name = &record.path;
    let path = dir.join(name);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return Some(format!("`{name}` is missing"));
    };
    if !meta.is_file() {
        return Some(format!("`{name}` is not a regular file"));
    }
    if meta.len() != record.size {
        return Some(format!(
            "`{name}` has {} bytes, the receipt says {}",
            meta.len(),
            record.size
        ));
    }
    if cfg!(unix) && mode_of(&meta) != record.mode {
        return Some(format!(
            "`{name}` has mode {:o}, the receipt says {:o}",
            mode_of(&meta),
            record.mode
        ));
    }
    if depth == Depth::Quick && stamp_of(&meta) == record.stamp {
        return None;
    }
    match sha256_file(&path) {
        Ok(digest) if digest == record.sha256 => None,
        Ok(_) => Some(format!("`{name}` does not match its SHA-256")),
        Err(_) => Some(format!("`{name}` cannot be read")),
    }
}

/// Every file under `dir`, as `/`-separated relative paths (links and others included).
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), String::new())];
    while let Some((path, prefix)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push((entry.path(), format!("{name}/"))),
                _ => found.push(name),
            }
        }
    }
    found
}
