//! `ServerLauncher`: turns the configured [`ServerSource`] into the exact launch line of
//! one turn. For an installed build it runs the installer's check (and repair) every
//! time; for an explicit command it uses the command. Either way the environment is the
//! allowlist, the server's own variables and the configured extras, and the launch is
//! confined as the provider's confinement policy plans it (refused here, before anything
//! is installed or started, when `required` cannot be met).

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use super::confine::{ConfinementPlan, ConfinementPolicy};
use super::environment::server_environment;
use crate::config::{AdapterConfig, ServerSource};
use crate::error::AdapterError;
use crate::install::{InstallError, InstallOutcome, InstallReport, Installer};

/// The exact process to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LaunchLine {
    /// The executable.
    pub(crate) program: PathBuf,
    /// Its arguments.
    pub(crate) args: Vec<String>,
    /// Its whole environment.
    pub(crate) env: Vec<(OsString, OsString)>,
    /// The installed build's archive digest (`None` for an explicit command). With the
    /// rest of the line it keys the process pool.
    pub(crate) digest: Option<String>,
    /// How many times the install was repaired before this line was made. It keys the
    /// pool too, so a process started from files a later check found changed is never
    /// reused: the repair retires it with the files it ran from.
    pub(crate) repairs: u64,
    /// How the process is confined.
    pub(crate) confinement: ConfinementPlan,
}

#[derive(Debug)]
enum Launch {
    Command(crate::config::ServerCommand),
    /// Boxed: the installer's options (its free-space probe among them) make it far larger
    /// than the other variants.
    Installed(Box<Installer>),
    /// The installer could not even be set up (no cache dir, unknown platform).
    Unusable {
        reason: &'static str,
        message: String,
    },
}

/// Where a provider's turns get their server from.
#[derive(Debug)]
pub(crate) struct ServerLauncher {
    launch: Launch,
    extra_env: Vec<(String, String)>,
    host_env: Option<Vec<(OsString, OsString)>>,
    confinement: ConfinementPolicy,
    /// The install's repairs so far (see [`LaunchLine::repairs`]).
    repairs: AtomicU64,
}

impl ServerLauncher {
    pub(crate) fn new(config: &AdapterConfig) -> Self {
        let launch = match &config.server {
            ServerSource::Command(command) => Launch::Command(command.clone()),
            ServerSource::Installed(options) => match Installer::new(options.clone()) {
                Ok(installer) => Launch::Installed(Box::new(installer)),
                Err(error) => Launch::Unusable {
                    reason: error.reason(),
                    message: error.to_string(),
                },
            },
        };
        Self {
            launch,
            extra_env: config.extra_env.clone(),
            host_env: config.host_env.clone(),
            confinement: ConfinementPolicy::new(config),
            repairs: AtomicU64::new(0),
        }
    }

    /// The launch line for the next turn, installing or repairing the server first when
    /// it is an installed build (C68).
    pub(crate) async fn resolve(&self) -> Result<LaunchLine, AdapterError> {
        let installed = matches!(self.launch, Launch::Installed(_));
        let confinement = self.confinement.plan(installed)?;
        let (program, args, own, digest) = match &self.launch {
            Launch::Command(command) => (
                command.program.clone(),
                command.args.clone(),
                command.env.clone(),
                None,
            ),
            Launch::Installed(installer) => {
                let InstallReport { server, outcome } =
                    installer.ensure().await.map_err(install_failed)?;
                tracing::debug!(?outcome, "server install checked");
                if matches!(outcome, InstallOutcome::Repaired { .. }) {
                    self.repairs.fetch_add(1, Ordering::SeqCst);
                }
                (
                    server.command,
                    server.args,
                    server.env,
                    Some(server.archive_sha256),
                )
            }
            Launch::Unusable { reason, message } => {
                return Err(AdapterError::Install {
                    reason,
                    message: message.clone(),
                });
            }
        };
        let host = match &self.host_env {
            Some(vars) => vars.clone(),
            None => std::env::vars_os().collect(),
        };
        Ok(LaunchLine {
            program,
            args,
            env: server_environment(host, &own, &self.extra_env),
            digest,
            repairs: self.repairs.load(Ordering::SeqCst),
            confinement,
        })
    }
}

fn install_failed(error: InstallError) -> AdapterError {
    AdapterError::Install {
        reason: error.reason(),
        message: error.to_string(),
    }
}
