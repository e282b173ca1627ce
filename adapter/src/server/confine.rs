//! Kernel confinement of every server process the adapter launches (B06): on Linux,
//! Landlock; on macOS, a Seatbelt profile (the `seatbelt` module) under `required` only, until a
//! run on a real Mac is recorded; on Windows, none yet (`best_effort` warns, `required`
//! refuses). The rest of this paragraph is Linux's. Google's server is an agent with tools of its own (files, commands), and a
//! native action may run before the adapter hears of it; confinement makes sure such an
//! action reaches nothing but what the server needs. A confined server may write only
//! beneath its private scratch root (its temp directory, `TMPDIR`, is inside it), its
//! credentials home (`GEMINI_HOME`, default `~/.gemini`) and the configured
//! `extra_write_paths`; it may read and execute only its own files (the directory of its
//! program: an install's `current/`, a command's own directory), the system's runtime
//! paths and `extra_read_paths`; and from ABI 6 on it cannot signal, or connect to an
//! abstract unix socket of, any process outside its own Landlock domain. The exact lists
//! and why each entry is there: [`allowlist`]. The network is not restricted (see the
//! README's "Confinement": a Landlock port rule cannot follow a pooled process's bridge,
//! whose port changes every turn, nor the sign-in flow's loopback listener).
//!
//! **How it is applied.** The whole ruleset is built in the adapter, before the spawn:
//! every path opened, the rules added and the ruleset created (a file descriptor, close-
//! on-exec). The child then needs only two raw system calls between `fork` and `exec`:
//! `prctl(PR_SET_NO_NEW_PRIVS)` and `landlock_restrict_self(fd)`, in one audited
//! `pre_exec` (in `kernel.rs`). Those two calls allocate nothing, take no lock and log
//! nothing, so they are async-signal-safe, which is all that may run in the child of a
//! multi-threaded parent. A launcher binary that restricts itself and then execs the
//! server was the alternative; it was rejected because inside DSH the host process is
//! `node`, so the launcher would have to ship as its own binary in the npm package, for
//! every platform, beside the napi addon. The restriction is irrevocable and inherited:
//! the server, its harness and every process they start stay in the domain.
//!
//! **The setting.** `confinement: required | best_effort | off` ([`ConfinementMode`]):
//! `required` refuses to start a server the kernel cannot confine with files and signals
//! (`ACP_CONFINEMENT_UNAVAILABLE`), `best_effort` (the default) confines with the
//! strongest ABI the kernel offers, up to the one these rules are written for, and `off`
//! never confines. Each provider logs what it does once (`info`; a `warn` when it runs
//! unconfined). The plan of a launch is part of its launch line, so it keys the
//! pool: a process is never reused under other confinement settings.

pub mod allowlist;
#[cfg(target_os = "linux")]
mod kernel;
#[cfg_attr(
    not(target_os = "macos"),
    allow(
        dead_code,
        reason = "built and unit-tested everywhere, applied on macOS only"
    )
)]
pub(crate) mod seatbelt;

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::process::Command;

use crate::config::{AdapterConfig, ConfinementMode};
use crate::error::AdapterError;

/// The Landlock ABI the rules are written and tested for (Linux 6.15+). A newer kernel
/// gets these rules; rights it added later are not asked for.
pub const TARGET_ABI: u8 = 7;

/// The first Landlock ABI that confines everything B06 promises: files (ABI 1 on) and
/// signals (ABI 6 on). `required` refuses a kernel below it.
pub const REQUIRED_ABI: u8 = 6;

/// How a server process runs, as the kernel enforces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Enforcement {
    /// Confined by Landlock, its rules built for this ABI.
    Confined {
        /// The Landlock ABI.
        abi: u8,
    },
    /// Not confined: `confinement: off`.
    Off,
    /// Not confined: the kernel offers no Landlock (`best_effort`).
    Unavailable,
    /// Confined by macOS's Seatbelt (`sandbox-exec` with the generated profile).
    Seatbelt,
    /// Not confined: on macOS the profile applies only under `required` until it has run
    /// on a real Mac (`best_effort`).
    SeatbeltUntried,
    /// Not confined: this system has no confinement yet (Windows; `best_effort`).
    NoConfinementHere,
}

impl fmt::Display for Enforcement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Confined { abi } => write!(
                f,
                "the server ran confined by the kernel (Landlock ABI {abi}): it could write \
                 only its scratch, temp and credentials folders"
            ),
            Self::Off => f.write_str(
                "the server ran unconfined (confinement is off): the action could reach the \
                 user's files",
            ),
            Self::Unavailable => f.write_str(
                "the server ran unconfined (the kernel offers no Landlock): the action could \
                 reach the user's files",
            ),
            Self::Seatbelt => f.write_str(
                "the server ran confined by macOS's Seatbelt: it could write only its scratch, \
                 temp and credentials folders",
            ),
            Self::SeatbeltUntried => f.write_str(
                "the server ran unconfined (on macOS the Seatbelt profile applies only under \
                 confinement: required until it has run on a real Mac): the action could reach \
                 the user's files",
            ),
            Self::NoConfinementHere => f.write_str(
                "the server ran unconfined (no confinement on Windows): the action could reach \
                 the user's files",
            ),
        }
    }
}

/// What a launch asks of confinement: how it is enforced and the configured extra
/// paths. Part of the launch line (and so of the pool key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfinementPlan {
    /// How the process will run.
    pub(crate) enforcement: Enforcement,
    /// `extra_read_paths`.
    pub(crate) extra_read: Vec<PathBuf>,
    /// `extra_write_paths`.
    pub(crate) extra_write: Vec<PathBuf>,
    /// Whether a missing credentials home is created (`0700`) for the server: for the
    /// installed build, Google's server, which keeps its sign-in there and, confined,
    /// could not create it itself. A configured command gets the rule only when the
    /// directory exists.
    pub(crate) create_home: bool,
}

impl ConfinementPlan {
    /// No confinement at all (tests that build launch lines by hand).
    #[cfg(test)]
    pub(crate) fn off() -> Self {
        Self {
            enforcement: Enforcement::Off,
            extra_read: Vec::new(),
            extra_write: Vec::new(),
            create_home: false,
        }
    }
}

/// What this system can confine a process with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(
    dead_code,
    reason = "each system constructs its own variant; decide() and its tests take them all"
)]
pub(crate) enum Confiner {
    /// Linux: Landlock, at this ABI (0: none).
    Landlock(u8),
    /// macOS: Seatbelt.
    Seatbelt,
    /// A system the adapter cannot confine on yet (Windows).
    None,
}

/// How `mode` runs with `confiner`, under a test's Landlock `ceiling`; an error where
/// `required` cannot be met.
pub(crate) fn decide(
    mode: ConfinementMode,
    confiner: Confiner,
    ceiling: Option<u8>,
) -> Result<Enforcement, AdapterError> {
    let kernel = match (confiner, mode) {
        (_, ConfinementMode::Off) => return Ok(Enforcement::Off),
        (Confiner::Landlock(abi), _) => abi,
        (Confiner::Seatbelt, ConfinementMode::Required) => return Ok(Enforcement::Seatbelt),
        (Confiner::Seatbelt, ConfinementMode::BestEffort) => {
            return Ok(Enforcement::SeatbeltUntried);
        }
        (Confiner::None, ConfinementMode::Required) => {
            return Err(AdapterError::ConfinementUnsupported {
                system: std::env::consts::OS,
            });
        }
        (Confiner::None, ConfinementMode::BestEffort) => {
            return Ok(Enforcement::NoConfinementHere);
        }
    };
    let offered = ceiling.map_or(kernel, |ceiling| ceiling.min(kernel));
    let abi = offered.min(TARGET_ABI);
    match mode {
        ConfinementMode::Off => Ok(Enforcement::Off),
        ConfinementMode::Required if abi < REQUIRED_ABI => {
            Err(AdapterError::ConfinementUnavailable {
                offered: abi,
                needed: REQUIRED_ABI,
            })
        }
        _ if abi == 0 => Ok(Enforcement::Unavailable),
        _ => Ok(Enforcement::Confined { abi }),
    }
}

/// What this system confines with (on Linux, the ABI its kernel offers).
pub(crate) fn this_system() -> Confiner {
    #[cfg(target_os = "linux")]
    {
        Confiner::Landlock(kernel::abi())
    }
    #[cfg(target_os = "macos")]
    {
        Confiner::Seatbelt
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        Confiner::None
    }
}

/// A provider's confinement settings; it plans every launch and says once what it does.
#[derive(Debug)]
pub(crate) struct ConfinementPolicy {
    mode: ConfinementMode,
    ceiling: Option<u8>,
    extra_read: Vec<PathBuf>,
    extra_write: Vec<PathBuf>,
    announced: AtomicBool,
}

impl ConfinementPolicy {
    pub(crate) fn new(config: &AdapterConfig) -> Self {
        Self {
            mode: config.confinement,
            ceiling: config.landlock_abi_ceiling,
            extra_read: config.extra_read_paths.clone(),
            extra_write: config.extra_write_paths.clone(),
            announced: AtomicBool::new(false),
        }
    }

    /// The plan of the next launch (`create_home`: see [`ConfinementPlan`]); an error (and
    /// nothing started) where `required` cannot be met.
    pub(crate) fn plan(&self, create_home: bool) -> Result<ConfinementPlan, AdapterError> {
        let decided = decide(self.mode, this_system(), self.ceiling);
        if !self.announced.swap(true, Ordering::Relaxed) {
            announce(self.mode, &decided);
        }
        Ok(ConfinementPlan {
            enforcement: decided?,
            extra_read: self.extra_read.clone(),
            extra_write: self.extra_write.clone(),
            create_home,
        })
    }
}

/// The one log line per provider saying how its servers run.
fn announce(mode: ConfinementMode, decided: &Result<Enforcement, AdapterError>) {
    let mode = mode.as_str();
    match decided {
        Ok(Enforcement::Confined { abi }) => {
            tracing::info!(mode, abi, "server processes run confined by Landlock");
        }
        Ok(Enforcement::Off) => {
            tracing::info!(mode, "server processes run unconfined: confinement is off");
        }
        Ok(Enforcement::Unavailable) => tracing::warn!(
            mode,
            "server processes run unconfined: the kernel offers no Landlock"
        ),
        Ok(Enforcement::Seatbelt) => {
            tracing::info!(mode, "server processes run confined by macOS's Seatbelt");
        }
        Ok(Enforcement::SeatbeltUntried) => tracing::warn!(
            mode,
            "unconfined: on macOS the Seatbelt profile applies only under confinement: \
             required until it has run on a real Mac"
        ),
        Ok(Enforcement::NoConfinementHere) => {
            tracing::warn!(mode, "unconfined: no confinement on Windows");
        }
        Err(_) => tracing::warn!(
            mode,
            "no server process can start: confinement is required and this system cannot \
             confine it"
        ),
    }
}

/// The confinement of one spawn, built in the parent before it.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The created ruleset, when the process is confined.
    #[cfg(target_os = "linux")]
    ruleset: Option<std::os::fd::OwnedFd>,
    /// The Seatbelt profile, when the process is confined on macOS.
    #[cfg(target_os = "macos")]
    profile: Option<String>,
    /// How the process runs.
    pub(crate) enforcement: Enforcement,
}

impl Prepared {
    /// Builds the ruleset of a process running `program` with `env` in `scratch` (its
    /// private scratch root), as `plan` says.
    pub(crate) fn build(
        plan: &ConfinementPlan,
        program: &Path,
        env: &[(OsString, OsString)],
        scratch: &Path,
    ) -> Result<Self, AdapterError> {
        match plan.enforcement {
            #[cfg(target_os = "linux")]
            Enforcement::Confined { abi } => {
                let launch = allowlist::Launch {
                    program,
                    env,
                    scratch,
                    extra_read: &plan.extra_read,
                    extra_write: &plan.extra_write,
                };
                if let Some(home) = allowlist::credentials_home(env).filter(|_| plan.create_home)
                    && let Err(error) = super::scratch::ensure_private_dir(&home)
                {
                    // The server will not be able to keep its sign-in there; the rule is
                    // skipped with the missing directory.
                    tracing::debug!(kind = ?error.kind(), "could not create the credentials home");
                }
                let ruleset = kernel::build(abi, &allowlist::rules(&launch))?;
                Ok(Self {
                    ruleset: Some(ruleset),
                    enforcement: plan.enforcement,
                })
            }
            #[cfg(target_os = "macos")]
            Enforcement::Seatbelt => {
                let launch = allowlist::Launch {
                    program,
                    env,
                    scratch,
                    extra_read: &plan.extra_read,
                    extra_write: &plan.extra_write,
                };
                let profile = seatbelt::profile(&allowlist::rules(&launch))
                    .map_err(AdapterError::ConfinementFailed)?;
                Ok(Self {
                    profile: Some(profile),
                    enforcement: plan.enforcement,
                })
            }
            enforcement => {
                let _unused = (program, env, scratch);
                Ok(Self {
                    #[cfg(target_os = "linux")]
                    ruleset: None,
                    #[cfg(target_os = "macos")]
                    profile: None,
                    enforcement,
                })
            }
        }
    }

    /// The command that runs `program` with `args` confined as planned: on Linux the
    /// child restricts itself with the ruleset before it execs; on macOS `sandbox-exec`
    /// applies the profile and execs the program.
    #[allow(
        clippy::disallowed_methods,
        reason = "the server spawn's command (C15), started only by ManagedProcess"
    )]
    pub(crate) fn command(&self, program: &Path, args: &[String]) -> Command {
        #[cfg(target_os = "macos")]
        if let Some(profile) = &self.profile {
            let mut command = Command::new(seatbelt::SANDBOX_EXEC);
            command
                .arg("-p")
                .arg(profile)
                .arg("--")
                .arg(program)
                .args(args);
            return command;
        }
        let mut command = Command::new(program);
        command.args(args);
        #[cfg(target_os = "linux")]
        if let Some(ruleset) = &self.ruleset {
            kernel::restrict_on_exec(&mut command, ruleset);
        }
        command
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_effort_takes_the_strongest_abi_up_to_the_target() -> crate::TestResult {
        let mode = ConfinementMode::BestEffort;
        assert_eq!(
            decide(mode, Confiner::Landlock(7), None)?,
            Enforcement::Confined { abi: 7 }
        );
        assert_eq!(
            decide(mode, Confiner::Landlock(9), None)?,
            Enforcement::Confined { abi: 7 }
        );
        assert_eq!(
            decide(mode, Confiner::Landlock(3), None)?,
            Enforcement::Confined { abi: 3 }
        );
        assert_eq!(
            decide(mode, Confiner::Landlock(0), None)?,
            Enforcement::Unavailable
        );
        Ok(())
    }

    #[test]
    fn a_ceiling_simulates_an_older_kernel_but_never_a_newer_one() -> crate::TestResult {
        let mode = ConfinementMode::BestEffort;
        assert_eq!(
            decide(mode, Confiner::Landlock(7), Some(0))?,
            Enforcement::Unavailable
        );
        assert_eq!(
            decide(mode, Confiner::Landlock(7), Some(4))?,
            Enforcement::Confined { abi: 4 }
        );
        assert_eq!(
            decide(mode, Confiner::Landlock(3), Some(7))?,
            Enforcement::Confined { abi: 3 }
        );
        Ok(())
    }

    #[test]
    fn required_refuses_a_kernel_that_cannot_scope_signals() -> crate::TestResult {
        let mode = ConfinementMode::Required;
        assert_eq!(
            decide(mode, Confiner::Landlock(6), None)?,
            Enforcement::Confined { abi: 6 }
        );
        assert_eq!(
            decide(mode, Confiner::Landlock(7), None)?,
            Enforcement::Confined { abi: 7 }
        );
        for (kernel, ceiling, offered) in [(5, None, 5), (0, None, 0), (7, Some(0), 0)] {
            match decide(mode, Confiner::Landlock(kernel), ceiling) {
                Err(AdapterError::ConfinementUnavailable { offered: o, needed }) => {
                    assert_eq!((o, needed), (offered, 6));
                }
                other => return Err(format!("{kernel}/{ceiling:?}: {other:?}").into()),
            }
        }
        Ok(())
    }

    #[test]
    fn off_never_confines() -> crate::TestResult {
        assert_eq!(
            decide(ConfinementMode::Off, Confiner::Landlock(7), None)?,
            Enforcement::Off
        );
        assert_eq!(
            decide(ConfinementMode::Off, Confiner::Landlock(0), Some(0))?,
            Enforcement::Off
        );
        Ok(())
    }

    #[test]
    fn macos_applies_seatbelt_only_under_required() -> crate::TestResult {
        use ConfinementMode::{BestEffort, Off, Required};
        assert_eq!(
            decide(Required, Confiner::Seatbelt, None)?,
            Enforcement::Seatbelt
        );
        // A profile that never ran on a real Mac must not break every first start.
        assert_eq!(
            decide(BestEffort, Confiner::Seatbelt, None)?,
            Enforcement::SeatbeltUntried
        );
        assert_eq!(decide(Off, Confiner::Seatbelt, None)?, Enforcement::Off);
        // The Landlock ceiling is Linux's test setting; it changes nothing elsewhere.
        assert_eq!(
            decide(Required, Confiner::Seatbelt, Some(0))?,
            Enforcement::Seatbelt
        );
        Ok(())
    }

    #[test]
    fn windows_warns_under_best_effort_and_refuses_under_required() -> crate::TestResult {
        use ConfinementMode::{BestEffort, Off, Required};
        assert_eq!(
            decide(BestEffort, Confiner::None, None)?,
            Enforcement::NoConfinementHere
        );
        assert_eq!(decide(Off, Confiner::None, None)?, Enforcement::Off);
        let refused = decide(Required, Confiner::None, None);
        let Err(error) = refused else {
            return Err(format!("required ran unconfined: {refused:?}").into());
        };
        let failure = error.to_llm_error();
        assert_eq!(
            failure.code,
            crate::contract::LlmErrorCode::AcpConfinementUnavailable
        );
        // A Windows or macOS user is never told about a Linux kernel.
        assert!(!failure.message.contains("Landlock"), "{}", failure.message);
        assert!(!failure.message.contains("kernel"), "{}", failure.message);
        Ok(())
    }

    #[test]
    fn every_way_a_server_runs_says_whether_it_was_confined() {
        for (enforcement, says) in [
            (
                Enforcement::Confined { abi: 7 },
                "confined by the kernel (Landlock ABI 7)",
            ),
            (Enforcement::Seatbelt, "confined by macOS's Seatbelt"),
            (Enforcement::SeatbeltUntried, "unconfined (on macOS"),
            (
                Enforcement::NoConfinementHere,
                "unconfined (no confinement on Windows)",
            ),
            (Enforcement::Off, "unconfined (confinement is off)"),
            (
                Enforcement::Unavailable,
                "unconfined (the kernel offers no Landlock)",
            ),
        ] {
            let text = enforcement.to_string();
            assert!(text.contains(says), "{enforcement:?}: {text}");
        }
    }

    #[tracing_test::traced_test]
    #[test]
    fn a_provider_says_once_how_its_servers_run() -> crate::TestResult {
        let config = AdapterConfig {
            landlock_abi_ceiling: Some(0),
            ..AdapterConfig::default()
        };
        let policy = ConfinementPolicy::new(&config);
        // What best_effort runs as on this system, and its warning.
        let (unconfined, warning) = if cfg!(target_os = "linux") {
            (Enforcement::Unavailable, "the kernel offers no Landlock")
        } else if cfg!(target_os = "macos") {
            (
                Enforcement::SeatbeltUntried,
                "the Seatbelt profile applies only under",
            )
        } else {
            (
                Enforcement::NoConfinementHere,
                "unconfined: no confinement on Windows",
            )
        };
        for _ in 0..3 {
            assert_eq!(policy.plan(false)?.enforcement, unconfined);
        }
        logs_assert(|lines: &[&str]| {
            let warnings = lines
                .iter()
                .filter(|l| l.contains("WARN") && l.contains(warning))
                .count();
            if warnings == 1 {
                Ok(())
            } else {
                Err(format!("{warnings} warnings, expected exactly one"))
            }
        });
        Ok(())
    }

    #[test]
    fn required_refuses_before_anything_starts() {
        let config = AdapterConfig {
            confinement: ConfinementMode::Required,
            landlock_abi_ceiling: Some(0),
            ..AdapterConfig::default()
        };
        let planned = ConfinementPolicy::new(&config).plan(false);
        if cfg!(target_os = "macos") {
            // macOS confines with Seatbelt whatever the (Linux) ceiling says.
            assert!(
                matches!(&planned, Ok(plan) if plan.enforcement == Enforcement::Seatbelt),
                "{planned:?}"
            );
        } else {
            assert!(
                matches!(
                    planned,
                    Err(AdapterError::ConfinementUnavailable { .. }
                        | AdapterError::ConfinementUnsupported { .. })
                ),
                "{planned:?}"
            );
        }
    }
}
