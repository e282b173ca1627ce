//! The archive check and extraction (C66). Every entry is validated before anything is
//! written: only regular files and directories, relative paths without `..`, no duplicate
//! names (also after Unicode and case folding), declared sizes, entry count and
//! compression ratio capped, and the server and harness present. Extraction then caps the
//! bytes actually read (a lying declared size is caught while reading), hashes each file
//! in the same pass, keeps executable bits masked to 0755/0644, and fsyncs what it wrote.

use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use unicode_normalization::UnicodeNormalization;
use zip::ZipArchive;

use super::error::InstallError;
use super::options::ArchiveLimits;

/// Entries above this size must respect the compression-ratio cap.
const RATIO_FLOOR_BYTES: u64 = 1024 * 1024;

/// A validated entry, ready to extract.
#[derive(Debug, Clone)]
struct PlannedEntry {
    index: usize,
    components: Vec<String>,
    is_dir: bool,
    declared_size: u64,
    executable: bool,
}

/// A file as extracted: what the receipt records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractedFile {
    /// Its path inside the install, `/`-separated.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its permission bits (0o755 or 0o644).
    pub mode: u32,
    /// Its SHA-256, hex.
    pub sha256: String,
}

fn unsafe_archive(why: String) -> InstallError {
    InstallError::UnsafeArchive(why)
}

/// Validates the whole archive, then extracts it into the empty directory `dest`.
/// `required` are the root members that must exist as files (they are made executable).
/// `on_file` is told each file's path before it is written.
pub fn extract_checked(
    archive_path: &Path,
    dest: &Path,
    required: &[&str],
    limits: &ArchiveLimits,
    on_file: &mut dyn FnMut(&str),
) -> Result<Vec<ExtractedFile>, InstallError> {
    let file = File::open(archive_path)
        .map_err(|e| InstallError::io("open the archive", archive_path, &e))?;
    let mut archive = ZipArchive::new(file)
        .map_err(|e| unsafe_archive(format!("not a readable ZIP archive ({e})")))?;
    let plan = validate(&mut archive, required, limits)?;
    let mut extracted = Vec::new();
    for entry in &plan {
        let target = entry
            .components
            .iter()
            .fold(dest.to_path_buf(), |path, part| path.join(part));
        if entry.is_dir {
            std::fs::create_dir_all(&target)
                .map_err(|e| InstallError::io("create a directory in", dest, &e))?;
            continue;
        }
        let name = entry.components.join("/");
        on_file(&name);
        let file = write_entry(&mut archive, entry, &target, &name)?;
        extracted.push(file);
    }
    sync_dirs(dest, &plan)?;
    Ok(extracted)
}

/// Checks every entry; returns the extraction plan.
fn validate(
    archive: &mut ZipArchive<File>,
    required: &[&str],
    limits: &ArchiveLimits,
) -> Result<Vec<PlannedEntry>, InstallError> {
    // The reader keeps one entry per name, so a duplicate would otherwise be invisible.
    if archive.has_duplicate_names() {
        return Err(unsafe_archive("two entries have the same name".to_owned()));
    }
    if archive.len() > limits.max_entries {
        return Err(unsafe_archive(format!(
            "{} entries (at most {} allowed)",
            archive.len(),
            limits.max_entries
        )));
    }
    let mut plan = Vec::with_capacity(archive.len());
    let mut folded = HashSet::new();
    let mut declared_total = 0u64;
    for index in 0..archive.len() {
        let entry = archive
            .by_index_raw(index)
            .map_err(|e| unsafe_archive(format!("entry {index} cannot be read ({e})")))?;
        let raw = entry.name_raw();
        let name = std::str::from_utf8(raw)
            .map_err(|_| unsafe_archive(format!("entry {index} has a name that is not UTF-8")))?
            .to_owned();
        let shown: String = name.chars().take(120).collect();
        let components = safe_components(&name)
            .map_err(|why| unsafe_archive(format!("entry `{shown}`: {why}")))?;
        let mode = entry.unix_mode();
        let kind = mode.map(|m| m & 0o170_000).unwrap_or(0);
        if entry.is_symlink() || !matches!(kind, 0 | 0o100_000 | 0o040_000) {
            return Err(unsafe_archive(format!(
                "entry `{shown}` is a link or special file; only regular files and directories are allowed"
            )));
        }
        let is_dir = entry.is_dir() || kind == 0o040_000;
        let declared_size = entry.size();
        if declared_size > limits.max_entry_bytes {
            return Err(unsafe_archive(format!(
                "entry `{shown}` declares {declared_size} bytes (at most {} allowed)",
                limits.max_entry_bytes
            )));
        }
        declared_total = declared_total.saturating_add(declared_size);
        if declared_total > limits.max_total_bytes {
            return Err(unsafe_archive(format!(
                "the entries declare more than {} bytes in all",
                limits.max_total_bytes
            )));
        }
        let compressed = entry.compressed_size();
        if declared_size > RATIO_FLOOR_BYTES
            && (compressed == 0 || declared_size / compressed > limits.max_compression_ratio)
        {
            return Err(unsafe_archive(format!(
                "entry `{shown}` expands {declared_size} bytes from {compressed} (a ratio above {} is refused)",
                limits.max_compression_ratio
            )));
        }
        let key: String = components
            .join("/")
            .nfc()
            .collect::<String>()
            .to_lowercase();
        if !folded.insert(key) {
            return Err(unsafe_archive(format!(
                "entry `{shown}` duplicates another entry's name (compared after Unicode and case folding)"
            )));
        }
        let executable = mode.is_some_and(|m| m & 0o111 != 0)
            || (components.len() == 1 && required.contains(&components[0].as_str()));
        plan.push(PlannedEntry {
            index,
            components,
            is_dir,
            declared_size,
            executable,
        });
    }
    for member in required {
        let present = plan
            .iter()
            .any(|e| !e.is_dir && e.components.len() == 1 && e.components[0] == *member);
        if !present {
            return Err(unsafe_archive(format!("the member `{member}` is missing")));
        }
    }
    Ok(plan)
}

/// Splits an entry name into safe relative components, or says why it is unsafe.
fn safe_components(name: &str) -> Result<Vec<String>, &'static str> {
    if name.is_empty() {
        return Err("an empty name");
    }
    if name.contains('\0') || name.contains('\\') {
        return Err("a NUL or backslash in the name");
    }
    if name.starts_with('/') {
        return Err("an absolute path");
    }
    let bytes = name.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err("a drive-letter path");
    }
    let trimmed = name.strip_suffix('/').unwrap_or(name);
    let mut components = Vec::new();
    for part in trimmed.split('/') {
        match part {
            "" | "." => return Err("an empty or `.` path component"),
            ".." => return Err("a `..` path component"),
            _ => components.push(part.to_owned()),
        }
    }
    Ok(components)
}

/// Writes one file, failing as soon as it holds more than its declared size. (So the
/// bytes read in all never exceed the declared total that `validate` capped.)
fn write_entry(
    archive: &mut ZipArchive<File>,
    entry: &PlannedEntry,
    target: &Path,
    name: &str,
) -> Result<ExtractedFile, InstallError> {
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| InstallError::io("create a directory for", target, &e))?;
    }
    let mut reader = archive
        .by_index(entry.index)
        .map_err(|e| unsafe_archive(format!("entry `{name}` cannot be read ({e})")))?;
    let mut out = File::options()
        .write(true)
        .create_new(true)
        .open(target)
        .map_err(|e| InstallError::io("create", target, &e))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 256 * 1024];
    let mut written = 0u64;
    loop {
        let n = reader
            .read(&mut buffer)
            .map_err(|e| unsafe_archive(format!("entry `{name}` cannot be decompressed ({e})")))?;
        if n == 0 {
            break;
        }
        written += n as u64;
        if written > entry.declared_size {
            return Err(unsafe_archive(format!(
                "entry `{name}` holds more than the {} bytes it declares",
                entry.declared_size
            )));
        }
        let chunk = buffer.get(..n).unwrap_or_default();
        hasher.update(chunk);
        out.write_all(chunk)
            .map_err(|e| InstallError::io("write", target, &e))?;
    }
    if written != entry.declared_size {
        return Err(unsafe_archive(format!(
            "entry `{name}` holds {written} bytes but declares {}",
            entry.declared_size
        )));
    }
    let mode = if entry.executable { 0o755 } else { 0o644 };
    set_mode(&out, target, mode)?;
    out.sync_all()
        .map_err(|e| InstallError::io("sync", target, &e))?;
    Ok(ExtractedFile {
        path: name.to_owned(),
        size: written,
        mode,
        sha256: hex::encode(hasher.finalize()),
    })
}

#[cfg(unix)]
fn set_mode(file: &File, path: &Path, mode: u32) -> Result<(), InstallError> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(|e| InstallError::io("set the mode of", path, &e))
}

#[cfg(not(unix))]
fn set_mode(_file: &File, _path: &Path, _mode: u32) -> Result<(), InstallError> {
    Ok(())
}

/// Fsyncs every directory the plan created, deepest first, then `dest` itself.
fn sync_dirs(dest: &Path, plan: &[PlannedEntry]) -> Result<(), InstallError> {
    let mut dirs: Vec<PathBuf> = plan
        .iter()
        .flat_map(|e| {
            let depth = if e.is_dir {
                e.components.len()
            } else {
                e.components.len() - 1
            };
            (1..=depth).map(|n| {
                e.components[..n]
                    .iter()
                    .fold(dest.to_path_buf(), |p, c| p.join(c))
            })
        })
        .collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    dirs.dedup();
    dirs.push(dest.to_path_buf());
    for dir in dirs {
        super::cache::sync_dir(&dir)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
