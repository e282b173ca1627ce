//! `AdapterConfig`: where the server comes from (an installed pinned build, or an explicit
//! command), the environment it gets, how the kernel confines it, and the adapter's bounds
//! and timeouts.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::install::InstallOptions;

mod agent_profile_choice;
mod auth_method;
mod plugin;

pub use agent_profile_choice::AgentProfileChoice;
pub use auth_method::AuthMethod;
pub use plugin::{PluginConfig, PluginConfigError, PluginServer};

/// The adapter's default provider route (DSH's `GenerateOptions.provider`), and its name
/// in the ACP `clientInfo`.
pub const ADAPTER_ID: &str = "antigravity-acp";

/// The model that means "whatever the server selects by itself"; the bundle patch makes
/// `antigravity-acp/server-default` the model of fresh chats (C02).
pub const SERVER_DEFAULT_MODEL: &str = "server-default";

/// An explicit server command: program, arguments and extra environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCommand {
    /// The executable (absolute, or looked up on `PATH`).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for the server on top of the allowlisted environment.
    pub env: Vec<(String, String)>,
}

impl Default for ServerCommand {
    /// Google's 1.3.0 launch line from the registry: `./agy_acp_server.par`, with `--uid=`
    /// on Linux.
    fn default() -> Self {
        let args = if cfg!(target_os = "linux") {
            vec!["--uid=".to_owned()]
        } else {
            Vec::new()
        };
        Self {
            program: PathBuf::from("agy_acp_server.par"),
            args,
            env: Vec::new(),
        }
    }
}

/// Where the server a turn launches comes from.
#[derive(Debug, Clone)]
pub enum ServerSource {
    /// The pinned 1.3.0 build, installed, verified and repaired by the adapter in its
    /// cache (the default for DSH).
    Installed(InstallOptions),
    /// This command, as it is (tests, `--server`, a server installed by other means).
    Command(ServerCommand),
}

impl Default for ServerSource {
    fn default() -> Self {
        Self::Installed(InstallOptions::default())
    }
}

impl From<ServerCommand> for ServerSource {
    fn from(command: ServerCommand) -> Self {
        Self::Command(command)
    }
}

/// Whether the server must run confined by the kernel (B06; Linux Landlock, see
/// `server::confine`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfinementMode {
    /// Refuse to start a server that cannot be confined with everything B06 promises
    /// (files and signals: Landlock ABI 6 or later); the turn fails with
    /// `ACP_CONFINEMENT_UNAVAILABLE`.
    Required,
    /// Confine with the strongest Landlock ABI the kernel offers, and run unconfined
    /// (with a warning, once per provider) where it offers none.
    #[default]
    BestEffort,
    /// Never confine (debugging a server that fails under confinement).
    Off,
}

impl ConfinementMode {
    /// The setting's spelling (`required`, `best_effort`, `off`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Required => "required",
            Self::BestEffort => "best_effort",
            Self::Off => "off",
        }
    }
}

impl std::str::FromStr for ConfinementMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [Self::Required, Self::BestEffort, Self::Off]
            .into_iter()
            .find(|mode| mode.as_str() == text)
            .ok_or_else(|| format!("`{text}` is not one of required, best_effort, off"))
    }
}

/// Everything the adapter can be told.
#[derive(Debug, Clone)]
pub struct AdapterConfig {
    /// The provider route the adapter registers for (default `antigravity-acp`).
    pub provider: String,
    /// The server to launch for each turn.
    pub server: ServerSource,
    /// Variables given to the server beyond the allowlist (any server source).
    pub extra_env: Vec<(String, String)>,
    /// The host environment the server's allowlist is drawn from; `None`: this
    /// process's environment (the normal case; scenarios plant variables here).
    pub host_env: Option<Vec<(OsString, OsString)>>,
    /// Where private scratch directories are made (default: the system temp dir).
    pub scratch_root: Option<PathBuf>,
    /// Bounds each active model segment (`timeoutMs`). Paused while DSH runs tools.
    pub timeout: Duration,
    /// Bounds how long a parked tool call waits for DSH's result (`toolTimeoutMs`).
    pub tool_timeout: Duration,
    /// Bounds `authenticate`, the server's browser sign-in (which 1.3.0 holds for about
    /// 8.5 minutes); past it the generation fails with `ACP_AUTH_REQUIRED`.
    pub sign_in_timeout: Duration,
    /// The only method the adapter signs in with when the server asks (`authMethod`,
    /// default `oauth-personal`); it never switches a method the server's
    /// `settings.json` already names.
    pub auth_method: AuthMethod,
    /// Whose way of naming a bridge call permission requests and tool call updates are
    /// judged by (`agentProfile`, default `auto`: the agent `initialize` names; C21).
    pub agent_profile: AgentProfileChoice,
    /// How many tool turns may be active at once before `stream` fails with `ACP_SESSION_BUSY`.
    pub max_active_turns: usize,
    /// How long a closing server gets after its stdin closes before its process group is
    /// killed.
    pub shutdown_grace: Duration,
    /// How long a healthy process may wait in the pool before it is disposed (C34).
    pub idle_process_timeout: Duration,
    /// How many healthy idle processes the pool keeps at most (C34); 0 disables pooling.
    pub max_idle_processes: usize,
    /// How many sessions one process may create before it is disposed instead of
    /// returned to the pool (C39).
    pub max_sessions_per_process: usize,
    /// Model ids listed by `listModels` beside `server-default` until discovery ran.
    pub models: Vec<String>,
    /// Tool names every session disables on top of the server's built-in ones
    /// ([`crate::NATIVE_TOOLS`]), sent after them in `_meta.agy.disabledTools` (B06).
    pub extra_disabled_tools: Vec<String>,
    /// Whether every server process runs confined by the kernel (default `best_effort`).
    pub confinement: ConfinementMode,
    /// Paths a confined server may also read (and execute), beyond its own files and
    /// the system's runtime paths: a configured command's scripts elsewhere, say.
    pub extra_read_paths: Vec<PathBuf>,
    /// Paths a confined server may also read and write, beyond its scratch root, its
    /// temp directory and its credentials home.
    pub extra_write_paths: Vec<PathBuf>,
    /// **Testing only**: act as if the kernel offered at most this Landlock ABI (`0`: a
    /// kernel without Landlock), so a test can show what `best_effort` and `required`
    /// do there. Never set in production; the DSH plugin's config has no such field.
    pub landlock_abi_ceiling: Option<u8>,
}

/// The models of the 1.3.0 free tier, as the server lists them.
pub const KNOWN_MODELS: [&str; 6] = [
    "gemini-3.8-flash-high",
    "gemini-3.8-flash-medium",
    "gemini-3.8-flash-low",
    "gemini-3.7-flash-high",
    "gemini-pro-agent",
    "gemini-3.1-pro-low",
];

impl Default for AdapterConfig {
    fn default() -> Self {
        Self {
            provider: ADAPTER_ID.to_owned(),
            server: ServerSource::default(),
            extra_env: Vec::new(),
            host_env: None,
            scratch_root: None,
            timeout: Duration::from_secs(600),
            // Google's MCP client abandons a tools/call after about 180 s; give up first.
            tool_timeout: Duration::from_secs(170),
            sign_in_timeout: Duration::from_secs(120),
            auth_method: AuthMethod::OauthPersonal,
            agent_profile: AgentProfileChoice::Auto,
            max_active_turns: 8,
            shutdown_grace: Duration::from_secs(2),
            idle_process_timeout: Duration::from_secs(300),
            max_idle_processes: 2,
            max_sessions_per_process: 32,
            models: KNOWN_MODELS.iter().map(|m| (*m).to_owned()).collect(),
            extra_disabled_tools: Vec::new(),
            confinement: ConfinementMode::BestEffort,
            extra_read_paths: Vec::new(),
            extra_write_paths: Vec::new(),
            landlock_abi_ceiling: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The design's numbers (C34, C41, C46, C47), as literals: a changed default is a
    /// changed promise.
    #[test]
    fn the_defaults_are_the_designs() {
        let config = AdapterConfig::default();
        assert_eq!(config.max_idle_processes, 2);
        assert_eq!(config.idle_process_timeout, Duration::from_secs(5 * 60));
        assert_eq!(config.max_sessions_per_process, 32);
        assert_eq!(config.max_active_turns, 8);
        assert_eq!(config.timeout, Duration::from_secs(600));
        assert_eq!(config.tool_timeout, Duration::from_secs(170));
        assert_eq!(config.sign_in_timeout, Duration::from_secs(120));
        assert!(matches!(config.server, ServerSource::Installed(_)));
        assert_eq!(config.provider, "antigravity-acp");
        assert_eq!(config.confinement, ConfinementMode::BestEffort);
        assert!(config.extra_read_paths.is_empty() && config.extra_write_paths.is_empty());
        assert_eq!(config.landlock_abi_ceiling, None);
        assert_eq!(config.agent_profile, AgentProfileChoice::Auto);
    }

    #[test]
    fn confinement_modes_read_as_they_are_written() {
        for mode in [
            ConfinementMode::Required,
            ConfinementMode::BestEffort,
            ConfinementMode::Off,
        ] {
            assert_eq!(mode.as_str().parse::<ConfinementMode>(), Ok(mode));
        }
        assert_eq!("required".parse(), Ok(ConfinementMode::Required));
        assert_eq!("best_effort".parse(), Ok(ConfinementMode::BestEffort));
        assert_eq!("off".parse(), Ok(ConfinementMode::Off));
        assert!("strict".parse::<ConfinementMode>().is_err());
    }
}
