//! Real ZIP archives for install scenarios: the good one (a server member that launches
//! the fake, the harness, a sibling runtime file, a sibling stored 0700) and the hostile
//! variants. Hostile
//! entries are named `planted-*`, so the runner can prove none was written anywhere.
//!
//! The members are named as this platform's build names them (`agy_acp_server.par` and
//! `localharness_external` on Unix, `.exe` on Windows). On Unix the server member is a
//! shell script that execs the fake; on Windows, where it must be a program, it is
//! `dsh-sim-stand-in` (built beside the dsh-sim binary), which runs the command line of
//! the sidecar member `agy_acp_server.stand-in`. Archives are Unix-made (`version made
//! by` Unix, modes in the external attributes) on every system, as Google's are.

use std::io::{Cursor, Write};
use std::path::Path;

use zip::ZipWriter;
use zip::write::SimpleFileOptions;

use crate::scenario::ArchiveKind;

/// The server member's name on Unix platforms (as scenarios name it).
pub const SERVER_MEMBER: &str = "agy_acp_server.par";
/// The harness member's name on Unix platforms (as scenarios name it).
pub const HARNESS_MEMBER: &str = "localharness_external";

/// This platform's server and harness members.
fn members_here() -> [&'static str; 2] {
    antigravity_acp::install::current_platform()
        .map(antigravity_acp::install::required_members)
        .unwrap_or([SERVER_MEMBER, HARNESS_MEMBER])
}

/// `name`, a member as scenarios name it (the Unix names), as this platform's archive
/// names it: on Windows the server and the harness are `.exe`.
pub fn member_here(name: &str) -> String {
    let [server, harness] = members_here();
    match name {
        SERVER_MEMBER => server.to_owned(),
        HARNESS_MEMBER => harness.to_owned(),
        other => other.to_owned(),
    }
}
/// A sibling runtime file the install must keep.
pub const SIBLING_MEMBER: &str = "runtime/certs.pem";
/// A sibling stored with mode 0700, which must arrive 0755 (C66: executable bits are
/// kept, masked to 0755/0644; neither the owner-only bits nor the file may be lost).
pub const PRIVATE_EXECUTABLE_MEMBER: &str = "runtime/helper.sh";
/// The prefix of every hostile entry's name.
pub const PLANTED_PREFIX: &str = "planted-";

/// What the archive's files are, for the runner's own check of the install.
#[derive(Debug, Clone)]
pub struct BuiltArchive {
    /// The ZIP's bytes.
    pub bytes: Vec<u8>,
    /// The good members: path, content and whether executable.
    pub members: Vec<Member>,
}

/// The mark in the server member that the swap fault changes in place.
pub const STAND_IN_MARK: &[u8] = b"# Stand-in for";

/// The server member on Unix: a shell script that runs the fake with the scenario's
/// script and journal, passing on the registry's arguments.
#[cfg(unix)]
fn server_members(fake: &Path, script: &Path, journal: &Path) -> Result<Vec<Member>, String> {
    let quote = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
    let script = format!(
        "#!/bin/sh\n{} Google's agy_acp_server.par: the scripted fake.\nexec {} fake-server --script {} --journal {} \"$@\"\n",
        String::from_utf8_lossy(STAND_IN_MARK),
        quote(fake),
        quote(script),
        quote(journal)
    );
    Ok(vec![(SERVER_MEMBER.to_owned(), script.into_bytes(), true)])
}

/// The server member on Windows: `dsh-sim-stand-in.exe` from beside `fake` (the dsh-sim
/// binary), the mark appended after the program (an overlay Windows ignores), and its
/// sidecar: the fake's command line, one argument per line.
#[cfg(not(unix))]
fn server_members(fake: &Path, script: &Path, journal: &Path) -> Result<Vec<Member>, String> {
    let launcher = fake.with_file_name(format!("dsh-sim-stand-in{}", std::env::consts::EXE_SUFFIX));
    let mut program = std::fs::read(&launcher).map_err(|e| {
        format!(
            "cannot read {} ({e}): build it with `cargo build -p dsh-sim --bins`",
            launcher.display()
        )
    })?;
    program.extend_from_slice(b"\n");
    program.extend_from_slice(STAND_IN_MARK);
    program.extend_from_slice(b" Google's agy_acp_server.exe: the scripted fake.\n");
    let [server, _] = members_here();
    let lines = [
        fake.display().to_string(),
        "fake-server".to_owned(),
        "--script".to_owned(),
        script.display().to_string(),
        "--journal".to_owned(),
        journal.display().to_string(),
    ];
    let sidecar = Path::new(server).with_extension("stand-in");
    Ok(vec![
        (server.to_owned(), program, true),
        (
            sidecar.display().to_string(),
            (lines.join("\n") + "\n").into_bytes(),
            false,
        ),
    ])
}

/// An archive member: its path, content and whether it is executable.
type Member = (String, Vec<u8>, bool);

/// Builds the archive `kind`; `planted_root` is where hostile paths aim (the scenario's
/// workspace), `entry_cap` the installer's per-entry cap.
pub fn build(
    kind: ArchiveKind,
    fake: &Path,
    script: &Path,
    journal: &Path,
    planted_root: &Path,
    entry_cap: u64,
) -> Result<BuiltArchive, String> {
    let [server, harness] = members_here();
    // The duplicate's stand-in name: the server's, its last letter changed.
    let decoy = format!("{}X", &server[..server.len() - 1]);
    let mut members = server_members(fake, script, journal)?;
    members.extend([
        (
            harness.to_owned(),
            b"\x7fELF stand-in for localharness_external\n".repeat(64),
            true,
        ),
        (
            SIBLING_MEMBER.to_owned(),
            b"-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n".to_vec(),
            false,
        ),
        (
            PRIVATE_EXECUTABLE_MEMBER.to_owned(),
            b"#!/bin/sh\n# a runtime helper stored owner-only (0700)\n".to_vec(),
            true,
        ),
    ]);
    if kind == ArchiveKind::MissingHarness {
        members.retain(|(name, _, _)| name != harness);
    }
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let fail = |e: zip::result::ZipError| format!("cannot build the test archive: {e}");
    let io_fail = |e: std::io::Error| format!("cannot build the test archive: {e}");
    let options = |executable: bool| {
        SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .system(zip::System::Unix)
            .unix_permissions(if executable { 0o755 } else { 0o644 })
    };
    zip.add_directory("runtime/", options(true)).map_err(fail)?;
    for (name, content, executable) in &members {
        let stored = if name == PRIVATE_EXECUTABLE_MEMBER {
            SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated)
                .system(zip::System::Unix)
                .unix_permissions(0o700)
        } else {
            options(*executable)
        };
        zip.start_file(name.as_str(), stored).map_err(fail)?;
        zip.write_all(content).map_err(io_fail)?;
    }
    let planted = |name: &str| planted_root.join(format!("{PLANTED_PREFIX}{name}"));
    match kind {
        ArchiveKind::DotDotEntry => {
            // From <workspace>/cache/staging-x/ two levels up is the workspace.
            zip.start_file("../../planted-dotdot.txt", options(false))
                .map_err(fail)?;
            zip.write_all(b"escaped").map_err(io_fail)?;
        }
        ArchiveKind::AbsoluteEntry => {
            let path = planted("absolute.txt").display().to_string();
            zip.start_file(path, options(false)).map_err(fail)?;
            zip.write_all(b"escaped").map_err(io_fail)?;
        }
        ArchiveKind::SymlinkEntry => {
            let target = planted_root.display().to_string();
            zip.add_symlink("planted-link", target, options(false))
                .map_err(fail)?;
            zip.start_file("planted-link/planted-through-link.txt", options(false))
                .map_err(fail)?;
            zip.write_all(b"escaped").map_err(io_fail)?;
        }
        ArchiveKind::OversizedEntry => {
            zip.start_file("planted-oversized.bin", options(false))
                .map_err(fail)?;
            let size = usize::try_from(entry_cap.saturating_add(4096)).unwrap_or(usize::MAX);
            let noise: Vec<u8> = (0..size).map(|i| (i * 7919 % 251) as u8).collect();
            zip.write_all(&noise).map_err(io_fail)?;
        }
        ArchiveKind::ZipBomb => {
            zip.start_file("planted-bomb.bin", options(false))
                .map_err(fail)?;
            zip.write_all(&vec![0u8; 8 * 1024 * 1024])
                .map_err(io_fail)?;
        }
        ArchiveKind::DuplicateName => {
            // Written under a same-length name, renamed in the bytes below.
            zip.start_file(decoy.as_str(), options(true))
                .map_err(fail)?;
            zip.write_all(b"#!/bin/sh\necho planted-duplicate\n")
                .map_err(io_fail)?;
        }
        ArchiveKind::Good | ArchiveKind::MissingHarness | ArchiveKind::LyingSize => {}
    }
    let mut bytes = zip.finish().map_err(fail)?.into_inner();
    match kind {
        ArchiveKind::DuplicateName => {
            replace_all(&mut bytes, decoy.as_bytes(), server.as_bytes());
        }
        ArchiveKind::LyingSize => lie_about_size(&mut bytes, harness)?,
        _ => {}
    }
    Ok(BuiltArchive { bytes, members })
}

fn replace_all(bytes: &mut [u8], from: &[u8], to: &[u8]) {
    let mut at = 0;
    while let Some(found) = bytes[at..].windows(from.len()).position(|w| w == from) {
        let start = at + found;
        bytes[start..start + to.len()].copy_from_slice(to);
        at = start + from.len();
    }
}

/// Makes `member` declare 16 bytes in both its local header and its central-directory
/// record, while its data holds more.
fn lie_about_size(bytes: &mut [u8], member: &str) -> Result<(), String> {
    let name = member.as_bytes();
    let mut patched = 0;
    let mut at = 0;
    while at + 46 <= bytes.len() {
        let signature = &bytes[at..at + 4];
        let (size_offset, name_len_offset, header_len) = match signature {
            [0x50, 0x4b, 0x03, 0x04] => (22, 26, 30),
            [0x50, 0x4b, 0x01, 0x02] => (24, 28, 46),
            _ => {
                at += 1;
                continue;
            }
        };
        let name_len = usize::from(u16::from_le_bytes([
            bytes[at + name_len_offset],
            bytes[at + name_len_offset + 1],
        ]));
        let start = at + header_len;
        if bytes.get(start..start + name_len) == Some(name) {
            bytes[at + size_offset..at + size_offset + 4].copy_from_slice(&16u32.to_le_bytes());
            patched += 1;
        }
        at += 4;
    }
    if patched == 2 {
        Ok(())
    } else {
        Err(format!(
            "could not patch `{member}`'s declared size ({patched} headers)"
        ))
    }
}
