//! macOS confinement: the Seatbelt profile (SBPL) a server runs under, through
//! `/usr/bin/sandbox-exec -p PROFILE -- PROGRAM ARGS…`, as codex-rs confines its tools.
//! The profile says the same as the Linux rules ([`super::allowlist`], with macOS's
//! runtime paths): deny by default; read and execute beneath the program's directories,
//! the runtime paths and `extra_read_paths`; read and write beneath the scratch root,
//! the credentials home and `extra_write_paths`; the device files. Besides the files it
//! allows what any program needs: metadata reads (Landlock does not control `stat`
//! either), forking and executing within the profile (children inherit it), signals to
//! its own processes only, `sysctl` reads, the network (as on Linux: the bridge's port
//! changes every turn), and the mach services of the Keychain, where 1.3.0 keeps its
//! credentials on macOS unless `AGY_ACP_FORCE_FILE_STORAGE=1` is set.
//!
//! Seatbelt matches real paths, so every path that exists is canonicalized (`/tmp` is
//! `/private/tmp`, `$TMPDIR` lies under `/private/var/folders`). A path that cannot be
//! written as an SBPL string (a control character) fails the launch: nothing starts.
//!
//! Until a run on a real Mac is recorded, the profile applies only under `confinement:
//! required` (see `decide` in the parent module). It is built and unit-tested on every
//! system; only macOS applies it.

use std::fmt::Write as _;
use std::path::Path;

use super::allowlist::{Rights, Rule};

/// The program that applies a profile and execs the server.
pub(crate) const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The mach services a confined server may look up: the Keychain and trust evaluation
/// (its credentials, TLS), the directory service (the user database), logging,
/// notifications and the system configuration (proxies, DNS).
pub(crate) const MACH_SERVICES: &[&str] = &[
    "com.apple.SecurityServer",
    "com.apple.securityd.xpc",
    "com.apple.trustd",
    "com.apple.trustd.agent",
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.system.logger",
    "com.apple.system.notification_center",
    "com.apple.SystemConfiguration.configd",
    "com.apple.SystemConfiguration.DNSConfiguration",
    "com.apple.cfprefsd.daemon",
    "com.apple.cfprefsd.agent",
    "com.apple.logd",
    "com.apple.diagnosticd",
    "com.apple.coreservices.launchservicesd",
];

/// What a profile begins with: deny by default, then what every program needs.
const PREAMBLE: &str = "\
(version 1)
(deny default)
(allow file-read-metadata)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow ipc-posix-shm-read-data ipc-posix-shm-read-metadata)
(allow network*)
";

/// The profile of a server confined by `rules`, or why it cannot be written.
pub(crate) fn profile(rules: &[Rule]) -> Result<String, &'static str> {
    let mut out = String::from(PREAMBLE);
    out.push_str("(allow mach-lookup");
    for service in MACH_SERVICES {
        let _infallible = write!(out, "\n  (global-name {})", quoted(service)?);
    }
    out.push_str(")\n");
    for rule in rules {
        let path = quoted_path(&rule.path)?;
        let line = match rule.rights {
            Rights::ReadExecute => {
                format!("(allow file-read* process-exec file-map-executable (subpath {path}))")
            }
            Rights::ReadWrite => format!("(allow file-read* file-write* (subpath {path}))"),
            Rights::Device => {
                format!("(allow file-read* file-write-data file-ioctl (literal {path}))")
            }
            Rights::ReadOnlyDevice => format!("(allow file-read* (literal {path}))"),
        };
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

/// `path` as Seatbelt matches it (its real path when it exists), as an SBPL string.
fn quoted_path(path: &Path) -> Result<String, &'static str> {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let text = real
        .to_str()
        .ok_or("a confined path is not UTF-8, which a Seatbelt profile cannot name")?;
    quoted(text)
}

/// `text` as an SBPL (Scheme) string literal: `"` and `\` escaped; a control character
/// refused, since no rule should ever name one.
fn quoted(text: &str) -> Result<String, &'static str> {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {
                return Err(
                    "a confined path holds a control character, which a Seatbelt \
                            profile cannot name",
                );
            }
            c => out.push(c),
        }
    }
    out.push('"');
    Ok(out)
}

// Unix paths (a profile names macOS's); on Windows they would be drive-relative.
#[cfg(all(test, unix))]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn rule(path: &str, rights: Rights) -> Rule {
        Rule {
            path: PathBuf::from(path),
            rights,
        }
    }

    #[test]
    fn the_profile_denies_by_default_and_grants_each_rule_its_rights() -> crate::TestResult {
        let text = profile(&[
            rule("/nonexistent/install/current", Rights::ReadExecute),
            rule("/nonexistent/scratch", Rights::ReadWrite),
            rule("/dev/null", Rights::Device),
            rule("/nonexistent/dev/urandom", Rights::ReadOnlyDevice),
        ])?;
        assert!(text.starts_with("(version 1)\n(deny default)\n"), "{text}");
        for line in [
            "(allow file-read* process-exec file-map-executable (subpath \"/nonexistent/install/current\"))",
            "(allow file-read* file-write* (subpath \"/nonexistent/scratch\"))",
            "(allow file-read* file-write-data file-ioctl (literal \"/dev/null\"))",
            "(allow file-read* (literal \"/nonexistent/dev/urandom\"))",
            "(global-name \"com.apple.SecurityServer\")",
            "(allow network*)",
        ] {
            assert!(text.contains(line), "{line}\nmissing from\n{text}");
        }
        // Nothing is written, read or run outside the rules: no blanket file rule.
        assert!(!text.contains("(allow file-write*)"), "{text}");
        assert!(!text.contains("(allow file-read*)"), "{text}");
        assert!(!text.contains("(allow process-exec)"), "{text}");
        // No way out of the profile: nothing may run unsandboxed.
        assert!(!text.contains("no-sandbox"), "{text}");
        Ok(())
    }

    #[test]
    fn a_hostile_path_stays_one_string() -> crate::TestResult {
        let text = profile(&[rule(
            "/nonexistent/a\"))(allow file-write* (subpath \"/\\",
            Rights::ReadWrite,
        )])?;
        assert!(
            text.contains(
                "(subpath \"/nonexistent/a\\\"))(allow file-write* (subpath \\\"/\\\\\"))"
            ),
            "{text}"
        );
        assert_eq!(text.matches("(allow file-read* file-write*").count(), 1);
        Ok(())
    }

    #[test]
    fn a_path_with_a_control_character_starts_nothing() {
        let refused = profile(&[rule("/nonexistent/a\nb", Rights::ReadWrite)]);
        assert!(
            matches!(refused, Err(why) if why.contains("control character")),
            "{refused:?}"
        );
    }

    #[test]
    fn existing_paths_are_written_as_their_real_paths() -> crate::TestResult {
        let dir = tempfile::tempdir()?;
        let real = std::fs::canonicalize(dir.path())?;
        let text = profile(&[rule(&dir.path().display().to_string(), Rights::ReadWrite)])?;
        let expected = format!("(subpath {})", quoted(&real.display().to_string())?);
        assert!(text.contains(&expected), "{expected}\nmissing from\n{text}");
        Ok(())
    }

    #[test]
    fn macos_rules_name_macos_paths_not_linux_ones() -> crate::TestResult {
        use super::super::allowlist::{Launch, MACOS_RUNTIME_READ_PATHS, rules_with};
        let env = [(
            std::ffi::OsString::from("GEMINI_HOME"),
            std::ffi::OsString::from("/nonexistent/home/.gemini"),
        )];
        let launch = Launch {
            program: Path::new("/nonexistent/install/current/agy_acp_server.par"),
            env: &env,
            scratch: Path::new("/nonexistent/scratch"),
            extra_read: &[],
            extra_write: &[],
        };
        let text = profile(&rules_with(&launch, MACOS_RUNTIME_READ_PATHS))?;
        for path in ["/System", "/private/etc", "/nonexistent/home/.gemini"] {
            assert!(text.contains(&format!("\"{path}\"")), "{path}: {text}");
        }
        for linux in ["\"/proc\"", "\"/sys\"", "\"/lib64\""] {
            assert!(!text.contains(linux), "{linux}: {text}");
        }
        Ok(())
    }
}
