//! What a confined server may reach: the paths of its Landlock rules (Linux) or of its
//! Seatbelt profile (macOS, the `seatbelt` module) and the rights each grants. Everything not listed is out of reach (DSH's workspace, the user's home, other
//! temp files), whatever the server or a tool it runs tries.
//!
//! - **Read and execute, beneath:** the directory of the server's program (an install's
//!   `current/`, holding the server and its harness; a command's own directory, the
//!   program found through the launch line's `PATH` as exec finds it, and the directory
//!   of its real file when it is a symlink), the runtime paths in
//!   [`RUNTIME_READ_PATHS`] and `extra_read_paths`.
//! - **Read and write, beneath:** the process's private scratch root (its session `cwd`s
//!   and its `TMPDIR` are inside it), its credentials home (`GEMINI_HOME`, else
//!   `$HOME/.gemini`: where 1.3.0 keeps its sign-in and its conversations) and
//!   `extra_write_paths`.
//! - **Device files:** [`READ_WRITE_DEVICES`] may be read, written, truncated (a shell's
//!   `> /dev/null`) and take ioctls; [`READ_ONLY_DEVICES`] may only be read.
//!
//! A path that does not exist is skipped (it grants nothing). Creating, removing,
//! renaming and linking are write rights: they are granted only beneath the read-write
//! paths. Listing and reading metadata (`stat`) are not controlled by Landlock at all.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The system's read-only runtime paths: programs and libraries (`/usr`, `/lib*`,
/// `/bin`, `/sbin`), configuration (`/etc`: the dynamic loader's cache, name resolution,
/// TLS roots, the time zone, the user database, Debian's alternatives; its secrets are
/// root's by file mode), the kernel's views (`/proc`, `/sys`: a process reads its own
/// `/proc/self`, and the CPU count; another process's private `/proc` files such as
/// `environ` stay closed, because Landlock refuses ptrace-style access across domains),
/// and systemd-resolved's `resolv.conf`, which `/etc/resolv.conf` links to.
pub const RUNTIME_READ_PATHS: &[&str] = &[
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc",
    "/proc",
    "/sys",
    "/run/systemd/resolve",
];

/// macOS's read-only runtime paths, as Seatbelt sees them (their real paths: `/etc` is
/// `/private/etc`): programs, libraries and frameworks (`/usr`, `/bin`, `/sbin`,
/// `/System`, `/Library`), configuration (`/private/etc`), the time zone database, the
/// dynamic linker's shared cache and `/private/var/select` (the system `sh`'s choice).
pub const MACOS_RUNTIME_READ_PATHS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var/db/timezone",
    "/private/var/db/dyld",
    "/private/var/select",
];

/// This system's read-only runtime paths.
fn runtime_read_paths() -> &'static [&'static str] {
    if cfg!(target_os = "macos") {
        MACOS_RUNTIME_READ_PATHS
    } else {
        RUNTIME_READ_PATHS
    }
}

/// Device files a server may read and write: the bit bucket and the controlling
/// terminal.
pub const READ_WRITE_DEVICES: &[&str] = &["/dev/null", "/dev/tty"];

/// Device files a server may only read: zeroes and randomness.
pub const READ_ONLY_DEVICES: &[&str] = &["/dev/zero", "/dev/random", "/dev/urandom"];

#[cfg_attr(
    not(any(target_os = "linux", target_os = "macos")),
    allow(
        dead_code,
        reason = "rules are built only where a system confines (Linux, macOS)"
    )
)]
/// The rights one rule grants beneath its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rights {
    /// Read files, list directories, execute.
    ReadExecute,
    /// Everything Landlock controls: read, write, create, remove, rename, truncate.
    ReadWrite,
    /// A device file: read, write, truncate, ioctl.
    Device,
    /// A device file: read only.
    ReadOnlyDevice,
}

#[cfg_attr(
    not(any(target_os = "linux", target_os = "macos")),
    allow(
        dead_code,
        reason = "rules are built only where a system confines (Linux, macOS)"
    )
)]
/// One rule: a path and what may be done beneath it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub(crate) path: PathBuf,
    pub(crate) rights: Rights,
}

#[cfg_attr(
    not(any(target_os = "linux", target_os = "macos")),
    allow(
        dead_code,
        reason = "rules are built only where a system confines (Linux, macOS)"
    )
)]
/// What one launch is made of.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Launch<'a> {
    /// The program, as the launch line names it.
    pub(crate) program: &'a Path,
    /// The process's whole environment.
    pub(crate) env: &'a [(OsString, OsString)],
    /// Its private scratch root.
    pub(crate) scratch: &'a Path,
    /// `extra_read_paths`.
    pub(crate) extra_read: &'a [PathBuf],
    /// `extra_write_paths`.
    pub(crate) extra_write: &'a [PathBuf],
}

#[cfg_attr(
    not(any(target_os = "linux", target_os = "macos")),
    allow(
        dead_code,
        reason = "rules are built only where a system confines (Linux, macOS)"
    )
)]
/// Every rule of a launch, with this system's runtime paths.
pub(crate) fn rules(launch: &Launch<'_>) -> Vec<Rule> {
    rules_with(launch, runtime_read_paths())
}

#[cfg_attr(
    not(any(target_os = "linux", target_os = "macos")),
    allow(
        dead_code,
        reason = "rules are built only where a system confines (Linux, macOS)"
    )
)]
/// Every rule of a launch, `runtime` its read-only runtime paths.
pub(crate) fn rules_with(launch: &Launch<'_>, runtime: &'static [&'static str]) -> Vec<Rule> {
    let rule = |rights| move |path: PathBuf| Rule { path, rights };
    let constant = |paths: &'static [&'static str]| paths.iter().map(PathBuf::from);
    let mut rules: Vec<Rule> = program_dirs(launch.program, launch.env)
        .into_iter()
        .chain(constant(runtime))
        .chain(launch.extra_read.iter().map(|p| absolute(p)))
        .map(rule(Rights::ReadExecute))
        .collect();
    rules.extend(
        std::iter::once(launch.scratch.to_path_buf())
            .chain(credentials_home(launch.env))
            .chain(launch.extra_write.iter().map(|p| absolute(p)))
            .map(rule(Rights::ReadWrite)),
    );
    rules.extend(constant(READ_WRITE_DEVICES).map(rule(Rights::Device)));
    rules.extend(constant(READ_ONLY_DEVICES).map(rule(Rights::ReadOnlyDevice)));
    rules
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

fn var<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsStr> {
    env.iter()
        .rev()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_os_str())
        .filter(|value| !value.is_empty())
}

/// The server's credentials home: `GEMINI_HOME`, else `$HOME/.gemini` (docs/antigravity-1.3.0.md §2).
pub fn credentials_home(env: &[(OsString, OsString)]) -> Option<PathBuf> {
    match var(env, "GEMINI_HOME") {
        Some(home) => Some(absolute(Path::new(home))),
        None => var(env, "HOME").map(|home| Path::new(home).join(".gemini")),
    }
}

/// The directories holding the server's own files: where its program is found (through
/// the launch line's `PATH` when it names no directory, as exec finds it), and where its
/// real file is when that is a symlink.
pub fn program_dirs(program: &Path, env: &[(OsString, OsString)]) -> Vec<PathBuf> {
    let found = if program.components().count() > 1 || program.is_absolute() {
        Some(absolute(program))
    } else {
        let path = var(env, "PATH")
            .map(OsStr::to_os_string)
            .or_else(|| std::env::var_os("PATH"))
            .unwrap_or_default();
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|candidate| candidate.is_file())
    };
    let Some(found) = found else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = found.parent().map(Path::to_path_buf).into_iter().collect();
    if let Some(real) = std::fs::canonicalize(&found)
        .ok()
        .and_then(|real| real.parent().map(Path::to_path_buf))
        && !dirs.contains(&real)
    {
        dirs.push(real);
    }
    dirs
}

// The rules exist only where a system confines (Linux, macOS): Unix paths and lookups.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::server::env_of as env;

    fn paths_with(rules: &[Rule], rights: Rights) -> Vec<PathBuf> {
        rules
            .iter()
            .filter(|r| r.rights == rights)
            .map(|r| r.path.clone())
            .collect()
    }

    #[test]
    fn a_bare_program_is_found_on_the_launch_lines_path() -> crate::TestResult {
        let dir = tempfile::tempdir()?;
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin)?;
        std::fs::write(bin.join("agent"), b"#!/bin/sh\n")?;
        let path = format!("/nonexistent:{}", bin.display());
        let dirs = program_dirs(Path::new("agent"), &env(&[("PATH", &path)]));
        assert_eq!(dirs, [bin]);
        assert!(program_dirs(Path::new("agent"), &env(&[("PATH", "/nonexistent")])).is_empty());
        Ok(())
    }

    /// A program named with a directory, relative or absolute, is that path, as exec
    /// takes it: never looked up on `PATH`, even when a file of that name is there.
    #[test]
    fn a_program_with_a_directory_is_not_looked_up_on_path() -> crate::TestResult {
        let dir = tempfile::tempdir()?;
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(bin.join("sub"))?;
        std::fs::write(bin.join("sub").join("agent"), b"#!/bin/sh\n")?;
        let path = env(&[("PATH", &bin.display().to_string())]);
        let relative = program_dirs(Path::new("sub/agent"), &path);
        assert_eq!(relative, [absolute(Path::new("sub"))]);
        let absolute_program = bin.join("sub").join("agent");
        assert_eq!(program_dirs(&absolute_program, &path), [bin.join("sub")]);
        Ok(())
    }

    #[test]
    fn a_symlinked_program_brings_its_real_directory() -> crate::TestResult {
        let dir = tempfile::tempdir()?;
        let (links, install) = (dir.path().join("links"), dir.path().join("install"));
        std::fs::create_dir(&links)?;
        std::fs::create_dir(&install)?;
        std::fs::write(install.join("server"), b"")?;
        std::os::unix::fs::symlink(install.join("server"), links.join("server"))?;
        let dirs = program_dirs(&links.join("server"), &[]);
        let real = std::fs::canonicalize(&install)?;
        assert_eq!(dirs, [links, real]);
        Ok(())
    }

    #[test]
    fn the_credentials_home_is_gemini_home_else_dot_gemini() {
        assert_eq!(
            credentials_home(&env(&[("HOME", "/home/u"), ("GEMINI_HOME", "/g")])),
            Some(PathBuf::from("/g"))
        );
        assert_eq!(
            credentials_home(&env(&[("HOME", "/home/u"), ("GEMINI_HOME", "")])),
            Some(PathBuf::from("/home/u/.gemini"))
        );
        assert_eq!(credentials_home(&env(&[])), None);
    }

    /// The whole list, by rights: what is writable is exactly scratch, the credentials
    /// home and the configured extras; the user's home and the system temp dir are
    /// nowhere.
    #[test]
    fn writable_is_scratch_home_and_extras_only() {
        let environment = env(&[("HOME", "/home/u"), ("PATH", "/usr/bin")]);
        let launch = Launch {
            program: Path::new("/opt/agy/current/agy_acp_server.par"),
            env: &environment,
            scratch: Path::new("/tmp/s/antigravity-acp-x"),
            extra_read: &[PathBuf::from("/srv/scripts")],
            extra_write: &[PathBuf::from("/srv/journal")],
        };
        let rules = rules(&launch);
        assert_eq!(
            paths_with(&rules, Rights::ReadWrite),
            [
                PathBuf::from("/tmp/s/antigravity-acp-x"),
                PathBuf::from("/home/u/.gemini"),
                PathBuf::from("/srv/journal"),
            ]
        );
        let readable = paths_with(&rules, Rights::ReadExecute);
        assert_eq!(
            readable.first(),
            Some(&PathBuf::from("/opt/agy/current")),
            "{readable:?}"
        );
        assert!(readable.contains(&PathBuf::from("/srv/scripts")));
        for runtime in ["/usr", "/etc", "/proc"] {
            assert!(readable.contains(&PathBuf::from(runtime)), "{runtime}");
        }
        for never in ["/home/u", "/tmp", "/", "/home", "/dev", "/run"] {
            assert!(
                !rules.iter().any(|r| r.path == Path::new(never)),
                "{never} is in the allowlist"
            );
        }
        assert_eq!(
            paths_with(&rules, Rights::Device),
            [PathBuf::from("/dev/null"), PathBuf::from("/dev/tty")]
        );
        assert_eq!(
            paths_with(&rules, Rights::ReadOnlyDevice),
            [
                PathBuf::from("/dev/zero"),
                PathBuf::from("/dev/random"),
                PathBuf::from("/dev/urandom"),
            ]
        );
    }
}
