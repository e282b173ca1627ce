//! Archive validation and extraction on real ZIP files written to disk: a good archive
//! extracts with its modes, digests and sibling files; every hostile shape is refused
//! before a single file is written.

use std::io::Write;
use std::path::Path;

use zip::ZipWriter;
use zip::write::SimpleFileOptions;

use super::*;

const MEMBERS: [&str; 2] = ["agy_acp_server.par", "localharness_external"];

type Entry<'a> = (&'a str, &'a [u8], u32);

fn options(mode: u32) -> SimpleFileOptions {
    SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .system(zip::System::Unix)
        .unix_permissions(mode)
}

fn write_zip(path: &Path, entries: &[Entry<'_>]) -> crate::TestResult {
    let mut zip = ZipWriter::new(std::fs::File::create(path)?);
    for (name, content, mode) in entries {
        zip.start_file(*name, options(*mode))?;
        zip.write_all(content)?;
    }
    zip.finish()?;
    Ok(())
}

fn good() -> Vec<Entry<'static>> {
    vec![
        ("agy_acp_server.par", b"#!/bin/sh\necho server\n", 0o775),
        ("localharness_external", b"harness", 0o644),
        ("lib/runtime.txt", b"sibling", 0o600),
    ]
}

/// Extracts `entries` into a fresh directory; returns the result and whether the
/// directory is still empty.
type Extraction = (
    Result<Vec<ExtractedFile>, InstallError>,
    bool,
    tempfile::TempDir,
);

fn extract(
    entries: &[Entry<'_>],
    limits: &ArchiveLimits,
) -> Result<Extraction, Box<dyn std::error::Error + Send + Sync>> {
    let dir = tempfile::tempdir()?;
    let archive = dir.path().join("a.zip");
    let dest = dir.path().join("dest");
    write_zip(&archive, entries)?;
    std::fs::create_dir(&dest)?;
    let result = extract_checked(&archive, &dest, &MEMBERS, limits, &mut |_| {});
    let empty = std::fs::read_dir(&dest)?.next().is_none();
    Ok((result, empty, dir))
}

fn refused_untouched(
    entries: &[Entry<'_>],
    limits: &ArchiveLimits,
    why: &str,
) -> crate::TestResult {
    let (result, empty, _dir) = extract(entries, limits)?;
    match result {
        Err(InstallError::UnsafeArchive(message)) => {
            assert!(message.contains(why), "{message:?} does not say {why:?}");
        }
        other => return Err(format!("expected a refusal naming {why:?}, got {other:?}").into()),
    }
    assert!(empty, "a file was written before the archive was refused");
    Ok(())
}

/// Which ZIP header a patch applies to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Header {
    Local,
    Central,
}

/// Rewrites 4 bytes at `offset` in every `which` header of the entry `name` with `value`;
/// returns how many headers were patched.
fn patch_headers(
    bytes: &mut [u8],
    name: &[u8],
    which: &[Header],
    offset: usize,
    value: u32,
) -> usize {
    let mut patched = 0;
    for at in 0..bytes.len().saturating_sub(46) {
        let (header, len_at, fixed) = match bytes[at..at + 4] {
            [0x50, 0x4b, 0x03, 0x04] => (Header::Local, 26, 30),
            [0x50, 0x4b, 0x01, 0x02] => (Header::Central, 28, 46),
            _ => continue,
        };
        let len = usize::from(u16::from_le_bytes([
            bytes[at + len_at],
            bytes[at + len_at + 1],
        ]));
        if which.contains(&header) && bytes.get(at + fixed..at + fixed + len) == Some(name) {
            // The uncompressed size sits at 22 in a local header and 24 in a central one.
            let at_field = at
                + if offset == SIZE_FIELD && header == Header::Central {
                    24
                } else {
                    offset
                };
            bytes[at_field..at_field + 4].copy_from_slice(&value.to_le_bytes());
            patched += 1;
        }
    }
    patched
}

/// The uncompressed-size field (offset in a local header; 24 in a central one).
const SIZE_FIELD: usize = 22;
/// The external attributes of a central header (the Unix mode in the upper 16 bits).
const ATTRIBUTES_FIELD: usize = 38;

/// An extraction's result and the directory it wrote to.
type Extracted = (Result<Vec<ExtractedFile>, InstallError>, std::path::PathBuf);

/// Extracts `archive` into a fresh `dest` beside it.
fn extract_file(archive: &Path) -> Result<Extracted, Box<dyn std::error::Error + Send + Sync>> {
    let dest = archive.with_file_name("dest");
    std::fs::create_dir(&dest)?;
    let result = extract_checked(
        archive,
        &dest,
        &MEMBERS,
        &ArchiveLimits::default(),
        &mut |_| {},
    );
    Ok((result, dest))
}

#[test]
fn a_good_archive_keeps_siblings_and_masks_modes() -> crate::TestResult {
    let (result, _, dir) = extract(&good(), &ArchiveLimits::default())?;
    let files = result?;
    let names: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        names,
        [
            "agy_acp_server.par",
            "localharness_external",
            "lib/runtime.txt"
        ]
    );
    let modes: Vec<u32> = files.iter().map(|f| f.mode).collect();
    // 0775 → 0755; the harness is a required member, so executable; 0600 → 0644.
    assert_eq!(modes, [0o755, 0o755, 0o644]);
    assert_eq!(
        files[0].sha256,
        hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
            b"#!/bin/sh\necho server\n"
        ))
    );
    let sibling = std::fs::read(dir.path().join("dest/lib/runtime.txt"))?;
    assert_eq!(sibling, b"sibling");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("dest/agy_acp_server.par"))?
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }
    Ok(())
}

#[test]
fn paths_that_leave_the_directory_are_refused() -> crate::TestResult {
    let limits = ArchiveLimits::default();
    for (name, why) in [
        ("../evil", "`..`"),
        ("a/../../evil", "`..`"),
        ("/etc/evil", "absolute"),
        ("C:/evil", "drive-letter"),
        ("a\\..\\evil", "backslash"),
        ("a//b", "empty"),
    ] {
        let mut entries = good();
        entries.push((name, b"x", 0o644));
        refused_untouched(&entries, &limits, why)?;
    }
    Ok(())
}

#[test]
fn names_equal_after_case_or_unicode_folding_are_duplicates() -> crate::TestResult {
    let limits = ArchiveLimits::default();
    let mut entries = good();
    entries.push(("AGY_ACP_SERVER.PAR", b"x", 0o644));
    refused_untouched(&entries, &limits, "duplicates")?;
    let mut entries = good();
    entries.push(("caf\u{e9}", b"x", 0o644));
    entries.push(("cafe\u{301}", b"y", 0o644));
    refused_untouched(&entries, &limits, "duplicates")?;
    Ok(())
}

#[test]
fn a_symlink_entry_is_refused() -> crate::TestResult {
    let dir = tempfile::tempdir()?;
    let archive = dir.path().join("a.zip");
    let mut zip = ZipWriter::new(std::fs::File::create(&archive)?);
    for (name, content, mode) in good() {
        zip.start_file(name, options(mode))?;
        zip.write_all(content)?;
    }
    zip.add_symlink("link", "/etc", options(0o777))?;
    zip.finish()?;
    let dest = dir.path().join("dest");
    std::fs::create_dir(&dest)?;
    let result = extract_checked(
        &archive,
        &dest,
        &MEMBERS,
        &ArchiveLimits::default(),
        &mut |_| {},
    );
    assert!(
        matches!(&result, Err(InstallError::UnsafeArchive(m)) if m.contains("link")),
        "{result:?}"
    );
    assert_eq!(std::fs::read_dir(&dest)?.count(), 0);
    Ok(())
}

#[test]
fn declared_sizes_entry_counts_and_ratios_are_capped() -> crate::TestResult {
    let big = vec![7u8; 2048];
    let mut entries = good();
    entries.push(("big.bin", &big, 0o644));
    let tight = ArchiveLimits {
        max_entry_bytes: 2047,
        ..ArchiveLimits::default()
    };
    refused_untouched(&entries, &tight, "declares 2048 bytes")?;
    let total = ArchiveLimits {
        max_total_bytes: 2048,
        ..ArchiveLimits::default()
    };
    refused_untouched(&entries, &total, "more than 2048 bytes in all")?;
    let few = ArchiveLimits {
        max_entries: 3,
        ..ArchiveLimits::default()
    };
    refused_untouched(&entries, &few, "4 entries")?;
    let zeros = vec![0u8; 4 * 1024 * 1024];
    let mut bomb = good();
    bomb.push(("bomb.bin", &zeros, 0o644));
    refused_untouched(&bomb, &ArchiveLimits::default(), "ratio above 100")?;
    Ok(())
}

#[test]
fn the_default_limits_fit_the_real_archive_and_no_more() {
    let limits = ArchiveLimits::default();
    assert_eq!(limits.max_archive_bytes, 1_073_741_824);
    assert_eq!(limits.max_entry_bytes, 2_147_483_648);
    assert_eq!(limits.max_total_bytes, 4_294_967_296);
    assert_eq!(limits.max_entries, 64);
    assert_eq!(limits.max_compression_ratio, 100);
    // The real 1.3.0 linux-x86_64 archive: 333,727,150 bytes holding a 926,533,965-byte
    // server (ratio about 2.8).
    assert!(333_727_150 <= limits.max_archive_bytes);
    assert!(926_533_965 <= limits.max_entry_bytes);
}

#[test]
fn a_missing_member_is_named() -> crate::TestResult {
    let entries: Vec<Entry<'_>> = good()
        .into_iter()
        .filter(|e| e.0 != "localharness_external")
        .collect();
    refused_untouched(
        &entries,
        &ArchiveLimits::default(),
        "`localharness_external` is missing",
    )?;
    Ok(())
}

#[test]
fn a_member_that_is_a_directory_does_not_count() -> crate::TestResult {
    let mut entries: Vec<Entry<'_>> = good()
        .into_iter()
        .filter(|e| e.0 != "localharness_external")
        .collect();
    entries.push(("localharness_external/", b"", 0o755));
    refused_untouched(&entries, &ArchiveLimits::default(), "missing")?;
    Ok(())
}

#[test]
fn an_entry_larger_than_it_declares_is_caught_while_reading() -> crate::TestResult {
    let dir = tempfile::tempdir()?;
    let archive = dir.path().join("a.zip");
    write_zip(&archive, &good())?;
    // Make the harness declare 3 bytes in both headers while its data holds 7.
    let mut bytes = std::fs::read(&archive)?;
    let patched = patch_headers(
        &mut bytes,
        b"localharness_external",
        &[Header::Local, Header::Central],
        SIZE_FIELD,
        3,
    );
    assert_eq!(patched, 2);
    std::fs::write(&archive, bytes)?;
    let (result, _dest) = extract_file(&archive)?;
    assert!(
        matches!(result, Err(InstallError::UnsafeArchive(_))),
        "{result:?}"
    );
    Ok(())
}

#[test]
fn every_cap_admits_its_own_value() -> crate::TestResult {
    let data = vec![7u8; 2048];
    let mut entries = good();
    entries.push(("big.bin", &data, 0o644));
    let declared: u64 = entries.iter().map(|e| e.1.len() as u64).sum();
    let exact = ArchiveLimits {
        max_entries: 4,
        max_entry_bytes: 2048,
        max_total_bytes: declared,
        ..ArchiveLimits::default()
    };
    let (result, _, _dir) = extract(&entries, &exact)?;
    assert_eq!(result?.len(), 4);
    Ok(())
}

#[test]
fn the_ratio_cap_starts_above_one_mebibyte() -> crate::TestResult {
    let exactly = vec![0u8; 1024 * 1024];
    let mut entries = good();
    entries.push(("zeros.bin", &exactly, 0o644));
    let (result, _, _dir) = extract(&entries, &ArchiveLimits::default())?;
    result?;
    let over = vec![0u8; 1024 * 1024 + 1];
    let mut entries = good();
    entries.push(("zeros.bin", &over, 0o644));
    refused_untouched(&entries, &ArchiveLimits::default(), "ratio above 100")?;
    Ok(())
}

#[test]
fn a_large_entry_that_does_not_compress_is_accepted() -> crate::TestResult {
    let noise: Vec<u8> = (0..3 * 1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut entries = good();
    entries.push(("noise.bin", &noise, 0o644));
    let (result, _, _dir) = extract(&entries, &ArchiveLimits::default())?;
    assert_eq!(result?.len(), 4);
    Ok(())
}

#[test]
fn only_required_members_and_marked_files_are_executable() -> crate::TestResult {
    let mut entries = good();
    entries.push(("README.txt", b"plain", 0o644));
    entries.push(("tool.sh", b"#!/bin/sh\n", 0o700));
    entries.push(("runtime/helper", b"#!/bin/sh\n", 0o700));
    let (result, _, dir) = extract(&entries, &ArchiveLimits::default())?;
    let files = result?;
    let mode = |name: &str| files.iter().find(|f| f.path == name).map(|f| f.mode);
    assert_eq!(mode("README.txt"), Some(0o644));
    assert_eq!(mode("tool.sh"), Some(0o755));
    assert_eq!(mode("runtime/helper"), Some(0o755));
    // What the receipt records is what is on disk: a 0700 sibling arrives 0755.
    #[cfg(unix)]
    for (name, expected) in [
        ("tool.sh", 0o755),
        ("runtime/helper", 0o755),
        ("README.txt", 0o644),
    ] {
        use std::os::unix::fs::PermissionsExt;
        let on_disk = std::fs::metadata(dir.path().join("dest").join(name))?
            .permissions()
            .mode();
        assert_eq!(on_disk & 0o777, expected, "{name}");
    }
    #[cfg(not(unix))]
    let _unused = dir;
    Ok(())
}

/// A device entry cannot be written with the zip crate's API; the central directory's
/// mode bits of an ordinary entry are rewritten to a character device instead.
#[test]
fn a_device_entry_is_refused() -> crate::TestResult {
    let dir = tempfile::tempdir()?;
    let archive = dir.path().join("a.zip");
    let mut entries = good();
    entries.push(("devnode", b"", 0o644));
    write_zip(&archive, &entries)?;
    let mut bytes = std::fs::read(&archive)?;
    let patched = patch_headers(
        &mut bytes,
        b"devnode",
        &[Header::Central],
        ATTRIBUTES_FIELD,
        0o020_644 << 16,
    );
    assert_eq!(patched, 1);
    std::fs::write(&archive, bytes)?;
    let (result, dest) = extract_file(&archive)?;
    assert!(
        matches!(&result, Err(InstallError::UnsafeArchive(m)) if m.contains("special file")),
        "{result:?}"
    );
    assert_eq!(std::fs::read_dir(&dest)?.count(), 0);
    Ok(())
}
