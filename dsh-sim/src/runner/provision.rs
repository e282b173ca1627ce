//! Install scenarios, the runner's side: it builds a real ZIP whose server member
//! launches the fake, serves it with an agent index document on loopback HTTP, puts the cache
//! in the scenario's starting state (a good install then damage, installer processes run
//! at once, one killed mid-extraction or at any step), arms the scenario's install fault
//! (`install_fault`), hands the adapter an *installed* server source, and afterwards
//! records what the judge of the install ([`crate::runner::judge::install`]) reads: the
//! archive requests counted on the wire, the events, the cache's leftovers.

mod agent_index_server;
mod archive_builder;
mod cache_steps;
mod install_fault;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use antigravity_acp::ServerSource;
use antigravity_acp::install::{
    AgentIndexSource, ArchiveLimits, InstallEvent, InstallOptions, Installer, ProgressSink,
};
use sha2::{Digest, Sha256};

pub use agent_index_server::AgentIndexServer;
pub use archive_builder::{
    BuiltArchive, HARNESS_MEMBER, PLANTED_PREFIX, SERVER_MEMBER, SIBLING_MEMBER,
    build as build_archive, member_here,
};
pub use cache_steps::agent_index_document;

use crate::scenario::{InstallFault, InstallOutcomeKind, InstallScript, PinKind};
use install_fault::SwapPlan;

/// A scenario's provisioning: the agent index host, the cache and what the adapter did.
pub struct Provisioning {
    /// Whether the chat starts from an empty cache (no install, damage or installers before).
    started_empty: bool,
    server: AgentIndexServer,
    archive: BuiltArchive,
    options: InstallOptions,
    events: Arc<Mutex<Vec<InstallEvent>>>,
    /// The scenario's install fault.
    fault: Option<InstallFault>,
    workspace: PathBuf,
    failures: Vec<String>,
}

/// Where the scenario's files are.
pub struct ProvisionPaths<'a> {
    /// The dsh-sim binary (the fake, and `dsh-sim install`).
    pub program: &'a Path,
    /// The fake's script.
    pub script: &'a Path,
    /// The fake's journal folder.
    pub journal: &'a Path,
    /// The scenario's workspace (the cache goes in `cache/`).
    pub workspace: &'a Path,
}

impl Provisioning {
    /// Builds and serves the archive and puts the cache in its starting state.
    pub async fn prepare(
        script: &InstallScript,
        paths: &ProvisionPaths<'_>,
    ) -> Result<Self, String> {
        let mut limits = ArchiveLimits::default();
        if let Some(cap) = script.max_entry_bytes {
            limits.max_entry_bytes = cap;
        }
        let archive = archive_builder::build(
            script.archive,
            paths.program,
            paths.script,
            paths.journal,
            paths.workspace,
            limits.max_entry_bytes,
        )?;
        let digest = hex::encode(Sha256::digest(&archive.bytes));
        let platform = antigravity_acp::install::current_platform().map_err(|e| e.to_string())?;
        let index_digest = match script.registry_sha256 {
            crate::scenario::RegistryDigest::None => None,
            crate::scenario::RegistryDigest::Matching => Some(digest.clone()),
            crate::scenario::RegistryDigest::Wrong => Some("0".repeat(64)),
        };
        let make_index = |url: &str| {
            cache_steps::agent_index_document(
                script.registry,
                platform,
                url,
                index_digest.as_deref(),
            )
        };
        let server =
            AgentIndexServer::start(archive.bytes.clone(), script.serve, make_index).await?;
        let sha256_override = match script.pin {
            PinKind::Archive => Some(digest.clone()),
            PinKind::Builtin => None,
            PinKind::Wrong => Some("f".repeat(64)),
        };
        let events = Arc::new(Mutex::new(Vec::new()));
        let recorder = events.clone();
        // The swap strikes at the first launch check of the chat that passes (the good
        // install before the chat reports to no one).
        let swapper = (script.fault == Some(InstallFault::SwapFileBeforeLaunch))
            .then(|| SwapPlan::new(&paths.workspace.join("cache"), &archive.members))
            .transpose()?;
        let options = InstallOptions {
            cache_dir: Some(paths.workspace.join("cache")),
            agent_index: if script.registry_inline {
                AgentIndexSource::Document(server.index_document())
            } else {
                AgentIndexSource::Url(server.index_url())
            },
            insecure_loopback: script.insecure_loopback,
            sha256_override,
            limits,
            stall_timeout: Duration::from_millis(script.stall_timeout_ms.unwrap_or(300)),
            retries: 2,
            retry_backoff: Duration::from_millis(20),
            progress: Some(ProgressSink(Arc::new(move |event: &InstallEvent| {
                if let Ok(mut events) = recorder.lock() {
                    events.push(event.clone());
                }
                if let (InstallEvent::Reused, Some(swap)) = (event, &swapper) {
                    swap.strike();
                }
            }))),
            free_space: None,
        };
        let started_empty = script.cache.is_empty()
            && !script.installed_before
            && script.concurrent_installers == 0
            && !script.killed_installer
            && install_fault::starts_empty(script.fault);
        let mut provisioning = Self {
            started_empty,
            server,
            archive,
            options,
            events,
            fault: script.fault,
            workspace: paths.workspace.to_path_buf(),
            failures: Vec::new(),
        };
        provisioning
            .starting_state(script, paths.program, digest)
            .await?;
        if let Some(InstallFault::DropConnection { at_byte }) = script.fault {
            // Every try of the chat's first install: the first and each retry.
            let tries = usize::try_from(provisioning.options.retries).unwrap_or(0) + 1;
            provisioning.server.arm_drop(at_byte, tries);
        }
        Ok(provisioning)
    }

    /// The good install and the damage before the chat, and the installer processes.
    async fn starting_state(
        &mut self,
        script: &InstallScript,
        program: &Path,
        archive_digest: String,
    ) -> Result<(), String> {
        // The good install is made under the served archive's own digest, whatever pin
        // the chat's installer is told.
        let quiet = InstallOptions {
            progress: None,
            sha256_override: Some(archive_digest),
            ..self.options.clone()
        };
        let damage = install_fault::damage_before(script.fault, &script.cache);
        if script.installed_before
            || !damage.is_empty()
            || install_fault::needs_good_install(script.fault)
        {
            let installer = Installer::new(quiet).map_err(|e| e.to_string())?;
            installer
                .ensure()
                .await
                .map_err(|e| format!("the good install before the damage failed: {e}"))?;
            for step in &damage {
                cache_steps::apply(step, installer.cache_dir())?;
            }
        }
        let command = cache_steps::InstallerCommand {
            program,
            index_url: self.server.index_url(),
            options: &self.options,
        };
        if script.concurrent_installers > 0 {
            self.failures
                .extend(cache_steps::run_concurrent(&command, script.concurrent_installers).await);
        }
        if script.killed_installer {
            cache_steps::run_killed(&command).await?;
        }
        if let Some(InstallFault::KillInstaller { at_step }) = script.fault {
            cache_steps::run_killed_at(&command, at_step).await?;
        }
        Ok(())
    }

    /// The server source the adapter is configured with.
    pub fn server_source(&self) -> ServerSource {
        ServerSource::Installed(self.options.clone())
    }

    /// The cache folder.
    pub fn cache_dir(&self) -> PathBuf {
        self.workspace.join("cache")
    }

    /// Stops the agent index host and returns what the judge needs.
    pub async fn finish(self) -> ProvisionRecord {
        let downloads = self.server.downloads();
        let index_fetches = self.server.index_fetches();
        let events = self.events.lock().map(|e| e.clone()).unwrap_or_default();
        let cache_dir = self.workspace.join("cache");
        let published_after_chat = cache_dir
            .join(antigravity_acp::install::CURRENT_DIR)
            .exists();
        let leftovers_after_chat = cache_leftovers(&cache_dir);
        // Whatever a fault did, the next launch must leave a verified install.
        let next_attempt = match self.fault {
            Some(_) => Some(install_fault::next_attempt(&self.options).await),
            None => None,
        };
        self.server.stop().await;
        ProvisionRecord {
            downloads,
            index_fetches,
            started_empty: self.started_empty,
            published_after_chat,
            leftovers_after_chat,
            next_attempt,
            events,
            members: self.archive.members,
            cache_dir,
            workspace: self.workspace,
            failures: self.failures,
        }
    }
}

/// Anything in the cache but the lock and the published install.
pub fn cache_leftovers(cache: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(cache) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| {
            name != antigravity_acp::install::LOCK_FILE
                && name != antigravity_acp::install::CURRENT_DIR
        })
        .map(|name| format!("the cache holds a leftover `{name}`"))
        .collect()
}

/// What happened during an install scenario, for the judge.
#[derive(Debug, Clone)]
pub struct ProvisionRecord {
    /// Archive requests answered.
    pub downloads: usize,
    /// Agent index document requests answered.
    pub index_fetches: usize,
    /// Whether the chat started from an empty cache.
    pub started_empty: bool,
    /// Whether an install was published when the chat ended.
    pub published_after_chat: bool,
    /// What the cache held besides the lock and `current/` when the chat ended.
    pub leftovers_after_chat: Vec<String>,
    /// With an install fault: what the launch after the chat did, or its reason.
    pub next_attempt: Option<Result<InstallOutcomeKind, String>>,
    /// What the adapter's installer reported during the chat.
    pub events: Vec<InstallEvent>,
    /// The good members of the served archive.
    pub members: Vec<(String, Vec<u8>, bool)>,
    /// The cache folder.
    pub cache_dir: PathBuf,
    /// The scenario's workspace.
    pub workspace: PathBuf,
    /// Failures found while preparing (installer processes).
    pub failures: Vec<String>,
}
