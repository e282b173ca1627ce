//! The user commands of the npm package's `antigravity-acp-dsh` binary (issue 25 §3), in
//! Rust: the binary (`dsh-plugin/bin/`) only parses its command line, reads the config row
//! (validated here, as the plugin's: [`crate::PluginConfig`]), gathers what only Node knows
//! ([`HostFacts`]) and prints what these return ([`CommandOutput`]: text, or JSON with
//! `--json`, and the exit code).
//!
//! - [`doctor()`]: every check, each ok, warn, fail or skip with a one-line fix
//!   ([`report`], [`host`], `install_check`, `confinement_check`, `sign_in_check` over a
//!   `probe` server, `bridge_check`, `leftovers`).
//! - [`status()`]: the install, the sign-in and confinement on one line.
//! - [`login()`]: the server's sign-in with a method it advertises, its URL shown on the
//!   user's terminal only (never logged), with the `ssh -L` forward when there is no
//!   display.
//! - [`logout()`]: ACP `logout`, only when the server advertises it.
//! - [`models()`]: discovery's model list.
//!
//! An install's progress (`doctor --install`, and a DSH turn that installs) is rendered by
//! [`install_progress`]: a bar on a terminal, plain lines a few seconds apart elsewhere.
//!
//! Exit codes ([`EXIT_OK`], [`EXIT_FAILED`], [`EXIT_WARNINGS`], [`EXIT_USAGE`]): 0 all well,
//! 1 a failure, 2 `doctor`/`status` warnings only, 64 a refused command line or config.

mod bridge_check;
mod confinement_check;
mod doctor;
pub mod host;
mod install_check;
pub mod install_progress;
mod leftovers;
mod login;
mod logout;
mod models;
pub(crate) mod probe;
pub mod report;
mod sign_in_check;

pub use doctor::{DoctorOptions, doctor, status};
pub use host::HostFacts;
pub use install_progress::{InstallProgress, ProgressMode};
pub use login::{DEFAULT_WAIT, LoginOptions, LoginReport, SignInUrl, URL_MARKER, login};
pub use logout::{LogoutReport, logout};
pub use models::{ModelsReport, models};
pub use report::{
    Check, CheckReport, CheckStatus, CommandOutput, EXIT_FAILED, EXIT_OK, EXIT_USAGE, EXIT_WARNINGS,
};
