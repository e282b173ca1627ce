//! `PluginConfig`: the DSH plugin's `Config`, with its camelCase names, as the Cordis
//! plugin (`dsh-plugin/`) hands it over as JSON. Converting it into an [`AdapterConfig`]
//! is the adapter's business, so the Node binding only deserializes. A bad value is a
//! clear error naming the field; an absent one keeps the design's default.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::{
    AdapterConfig, AgentProfileChoice, AuthMethod, ConfinementMode, ServerCommand, ServerSource,
};
use crate::install::{AgentIndexSource, InstallOptions};

/// An explicit server command (`server: {command, args, env}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginServer {
    /// The executable (absolute, or looked up on `PATH`).
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for the server on top of the allowlisted environment.
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
}

/// The plugin's configuration, as DSH users write it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginConfig {
    /// The provider route (default `antigravity-acp`).
    pub provider: Option<String>,
    /// Absent: the pinned 1.3.0 build, installed by the adapter; or this command.
    pub server: Option<PluginServer>,
    /// Where the installer reads the registry document (an `https://` URL).
    pub registry: Option<String>,
    /// The installer's cache folder (absolute).
    pub cache_dir: Option<PathBuf>,
    /// Allow `http://` on loopback for the registry and archive (tests, mirrors).
    pub insecure_loopback: Option<bool>,
    /// A SHA-256 the archive must have instead of the built-in pin.
    pub sha256: Option<String>,
    /// Where private scratch directories are made (default: the system temp dir).
    pub scratch_root: Option<PathBuf>,
    /// Bounds each active model segment.
    pub timeout_ms: Option<u64>,
    /// Bounds how long a parked tool call waits for DSH's result.
    pub tool_timeout_ms: Option<u64>,
    /// How long a healthy idle process is kept.
    pub idle_process_timeout_ms: Option<u64>,
    /// How many healthy idle processes are kept (0 disables pooling).
    pub max_idle_processes: Option<usize>,
    /// How many sessions one process may open.
    pub max_sessions_per_process: Option<usize>,
    /// How many tool turns may be active at once.
    pub max_active_turns: Option<usize>,
    /// The models listed before discovery ran.
    pub models: Option<Vec<String>>,
    /// Tool names every session disables on top of the server's built-in ones
    /// (`AdapterConfig::extra_disabled_tools`).
    pub disabled_tools: Option<Vec<String>>,
    /// `required`, `best_effort` (the default) or `off`: whether the server runs
    /// confined by the kernel (Landlock).
    pub confinement: Option<ConfinementMode>,
    /// Absolute paths a confined server may also read (and execute).
    pub allow_read: Option<Vec<PathBuf>>,
    /// Absolute paths a confined server may also read and write.
    pub allow_write: Option<Vec<PathBuf>>,
    /// `oauth-personal` (the default), `oauth-business`, `gemini-api-key` or
    /// `agent-platform`: the only method the adapter signs in with.
    pub auth_method: Option<AuthMethod>,
    /// `auto` (the default: the agent `initialize` names), `antigravity` or `gemini-cli`:
    /// whose way of naming a bridge call the adapter trusts.
    pub agent_profile: Option<AgentProfileChoice>,
}

/// Why a plugin configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PluginConfigError {
    /// The JSON does not have the plugin config's shape (the text names the field).
    #[error("invalid antigravity-acp plugin config: {0}")]
    Shape(String),
    /// A value is out of range.
    #[error("invalid antigravity-acp plugin config: `{field}` {problem}")]
    Value {
        /// The field, by its camelCase name.
        field: &'static str,
        /// What is wrong with it.
        problem: &'static str,
    },
}

impl PluginConfig {
    /// Reads the plugin's JSON config.
    pub fn from_json(json: &str) -> Result<Self, PluginConfigError> {
        serde_json::from_str(json).map_err(|e| PluginConfigError::Shape(shape_problem(&e)))
    }

    /// The adapter's configuration, defaults filled in.
    pub fn into_adapter_config(self) -> Result<AdapterConfig, PluginConfigError> {
        let mut config = AdapterConfig::default();
        if let Some(provider) = self.provider {
            if provider.trim().is_empty() {
                return Err(invalid("provider", "must not be empty"));
            }
            config.provider = provider;
        }
        config.server = match self.server {
            Some(server) => {
                if server.command.is_empty() {
                    return Err(invalid("server.command", "must not be empty"));
                }
                ServerSource::Command(ServerCommand {
                    program: PathBuf::from(server.command),
                    args: server.args,
                    env: server.env.into_iter().collect(),
                })
            }
            None => ServerSource::Installed(install_options(
                self.registry,
                self.cache_dir,
                self.insecure_loopback,
                self.sha256,
            )?),
        };
        if let Some(root) = self.scratch_root {
            if !root.is_absolute() {
                return Err(invalid("scratchRoot", "must be an absolute path"));
            }
            config.scratch_root = Some(root);
        }
        set_duration(&mut config.timeout, self.timeout_ms, "timeoutMs")?;
        if let Some(method) = self.auth_method {
            config.auth_method = method;
        }
        if let Some(choice) = self.agent_profile {
            config.agent_profile = choice;
        }
        set_duration(
            &mut config.tool_timeout,
            self.tool_timeout_ms,
            "toolTimeoutMs",
        )?;
        set_duration(
            &mut config.idle_process_timeout,
            self.idle_process_timeout_ms,
            "idleProcessTimeoutMs",
        )?;
        if let Some(max) = self.max_idle_processes {
            config.max_idle_processes = max;
        }
        if let Some(max) = self.max_sessions_per_process {
            if max == 0 {
                return Err(invalid("maxSessionsPerProcess", "must be at least 1"));
            }
            config.max_sessions_per_process = max;
        }
        if let Some(max) = self.max_active_turns {
            if max == 0 {
                return Err(invalid("maxActiveTurns", "must be at least 1"));
            }
            config.max_active_turns = max;
        }
        if let Some(models) = self.models {
            config.models = models;
        }
        if let Some(names) = self.disabled_tools {
            if names.iter().any(|name| name.trim().is_empty()) {
                return Err(invalid("disabledTools", "must not hold an empty name"));
            }
            config.extra_disabled_tools = names;
        }
        if let Some(mode) = self.confinement {
            config.confinement = mode;
        }
        config.extra_read_paths = absolute_paths(self.allow_read, "allowRead")?;
        config.extra_write_paths = absolute_paths(self.allow_write, "allowWrite")?;
        Ok(config)
    }
}

/// What is wrong with the config's shape, without quoting a value (serde's type errors
/// quote the value, which may be a secret such as an `env` entry): a field-name problem,
/// or an unknown variant of a mode such as `confinement`, as serde words it (it names only
/// keys and mode names), anything else by its position.
fn shape_problem(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let names_only = [
        "unknown field",
        "missing field",
        "duplicate field",
        "unknown variant",
    ];
    if names_only.iter().any(|start| text.starts_with(start)) {
        return text;
    }
    format!(
        "a value has the wrong type or form at line {} column {}",
        error.line(),
        error.column()
    )
}

fn invalid(field: &'static str, problem: &'static str) -> PluginConfigError {
    PluginConfigError::Value { field, problem }
}

fn absolute_paths(
    paths: Option<Vec<PathBuf>>,
    field: &'static str,
) -> Result<Vec<PathBuf>, PluginConfigError> {
    let paths = paths.unwrap_or_default();
    if paths.iter().any(|path| !path.is_absolute()) {
        return Err(invalid(field, "must hold absolute paths only"));
    }
    Ok(paths)
}

fn set_duration(
    slot: &mut Duration,
    ms: Option<u64>,
    field: &'static str,
) -> Result<(), PluginConfigError> {
    match ms {
        Some(0) => Err(invalid(field, "must be at least 1 ms")),
        Some(ms) => {
            *slot = Duration::from_millis(ms);
            Ok(())
        }
        None => Ok(()),
    }
}

fn install_options(
    registry: Option<String>,
    cache_dir: Option<PathBuf>,
    insecure_loopback: Option<bool>,
    sha256: Option<String>,
) -> Result<InstallOptions, PluginConfigError> {
    let mut options = InstallOptions::default();
    if let Some(url) = registry {
        options.agent_index = AgentIndexSource::Url(url);
    }
    if let Some(dir) = cache_dir {
        if !dir.is_absolute() {
            return Err(invalid("cacheDir", "must be an absolute path"));
        }
        options.cache_dir = Some(dir);
    }
    options.insecure_loopback = insecure_loopback.unwrap_or(false);
    options.sha256_override = sha256;
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_config_is_the_designs_defaults() -> crate::TestResult {
        let config = PluginConfig::from_json("{}")?.into_adapter_config()?;
        assert_eq!(config.confinement, ConfinementMode::BestEffort);
        assert!(config.extra_read_paths.is_empty() && config.extra_write_paths.is_empty());
        let default = AdapterConfig::default();
        assert_eq!(config.provider, "antigravity-acp");
        assert_eq!(config.timeout, default.timeout);
        assert_eq!(config.max_idle_processes, 2);
        assert!(matches!(config.server, ServerSource::Installed(_)));
        assert!(config.extra_disabled_tools.is_empty());
        assert_eq!(config.agent_profile, AgentProfileChoice::Auto);
        Ok(())
    }

    /// `unix_path` as this system writes an absolute path: as is on Unix; on Windows with
    /// a drive letter and backslashes (`C:\tmp\s`), as DSH Desktop's users write them.
    fn native(unix_path: &str) -> PathBuf {
        if cfg!(windows) {
            PathBuf::from(format!("C:{}", unix_path.replace('/', "\\")))
        } else {
            PathBuf::from(unix_path)
        }
    }

    /// [`native`], as a JSON string.
    fn json(unix_path: &str) -> String {
        serde_json::Value::from(native(unix_path).to_string_lossy().into_owned()).to_string()
    }

    #[test]
    fn every_field_reaches_the_adapter_config() -> crate::TestResult {
        let config = PluginConfig::from_json(&format!(
            r#"{{"provider": "agy", "server": {{"command": {fake}, "args": ["--x"],
                "env": {{"A": "1"}}}}, "scratchRoot": {scratch}, "timeoutMs": 1500,
                "toolTimeoutMs": 2500, "idleProcessTimeoutMs": 3500, "maxIdleProcesses": 0,
                "maxSessionsPerProcess": 4, "maxActiveTurns": 3, "models": ["m1"],
                "disabledTools": ["my_tool", "view_file"],
                "confinement": "required", "allowRead": [{read}],
                "allowWrite": [{write}], "agentProfile": "gemini-cli"}}"#,
            fake = json("/bin/fake"),
            scratch = json("/tmp/s"),
            read = json("/opt/agent"),
            write = json("/var/agent"),
        ))?
        .into_adapter_config()?;
        assert_eq!(config.provider, "agy");
        let ServerSource::Command(command) = &config.server else {
            return Err("not a command".into());
        };
        assert_eq!(command.program, native("/bin/fake"));
        assert_eq!(command.args, ["--x"]);
        assert_eq!(command.env, [("A".to_owned(), "1".to_owned())]);
        assert_eq!(config.scratch_root, Some(native("/tmp/s")));
        assert_eq!(config.timeout, Duration::from_millis(1500));
        assert_eq!(config.tool_timeout, Duration::from_millis(2500));
        assert_eq!(config.idle_process_timeout, Duration::from_millis(3500));
        assert_eq!(config.max_idle_processes, 0);
        assert_eq!(config.max_sessions_per_process, 4);
        assert_eq!(config.max_active_turns, 3);
        assert_eq!(config.models, ["m1"]);
        assert_eq!(config.extra_disabled_tools, ["my_tool", "view_file"]);
        assert_eq!(config.confinement, ConfinementMode::Required);
        assert_eq!(config.extra_read_paths, [native("/opt/agent")]);
        assert_eq!(config.extra_write_paths, [native("/var/agent")]);
        assert_eq!(config.agent_profile, AgentProfileChoice::GeminiCli);
        let installed = PluginConfig::from_json(&format!(
            r#"{{"registry": "https://r.example/agents.json", "cacheDir": {cache},
                "insecureLoopback": true, "sha256": "ab"}}"#,
            cache = json("/c"),
        ))?
        .into_adapter_config()?;
        let ServerSource::Installed(options) = &installed.server else {
            return Err("not installed".into());
        };
        assert_eq!(
            options.agent_index,
            AgentIndexSource::Url("https://r.example/agents.json".into())
        );
        assert_eq!(options.cache_dir, Some(native("/c")));
        assert!(options.insecure_loopback);
        assert_eq!(options.sha256_override.as_deref(), Some("ab"));
        Ok(())
    }

    #[test]
    fn bad_values_name_their_field() -> crate::TestResult {
        for (json, field) in [
            (r#"{"timeoutMs": 0}"#, "timeoutMs"),
            (r#"{"maxActiveTurns": 0}"#, "maxActiveTurns"),
            (r#"{"cacheDir": "relative"}"#, "cacheDir"),
            (r#"{"scratchRoot": "relative"}"#, "scratchRoot"),
            (r#"{"server": {"command": ""}}"#, "server.command"),
            (r#"{"provider": " "}"#, "provider"),
            (r#"{"disabledTools": ["my_tool", ""]}"#, "disabledTools"),
            (r#"{"allowRead": ["relative"]}"#, "allowRead"),
            (r#"{"allowWrite": ["/ok", "rel"]}"#, "allowWrite"),
        ] {
            let error = PluginConfig::from_json(json)?
                .into_adapter_config()
                .err()
                .ok_or(json)?;
            assert!(error.to_string().contains(field), "{json}: {error}");
        }
        let shape = PluginConfig::from_json(r#"{"timeoutMS": 5}"#)
            .err()
            .ok_or("an unknown field was accepted")?;
        assert!(shape.to_string().contains("timeoutMS"), "{shape}");
        let secret = PluginConfig::from_json(r#"{"timeoutMs": "hunter2-secret"}"#)
            .err()
            .ok_or("a string timeout was accepted")?;
        assert!(!secret.to_string().contains("hunter2"), "{secret}");
        assert!(secret.to_string().contains("column"), "{secret}");
        let not_a_list = PluginConfig::from_json(r#"{"disabledTools": "view_file"}"#)
            .err()
            .ok_or("a string was accepted as the disabledTools list")?;
        assert!(
            matches!(not_a_list, PluginConfigError::Shape(_)),
            "{not_a_list}"
        );
        let mode = PluginConfig::from_json(r#"{"confinement": "strict"}"#)
            .err()
            .ok_or("an unknown confinement mode was accepted")?;
        assert!(mode.to_string().contains("strict"), "{mode}");
        // The test-only ceiling is no plugin setting.
        assert!(PluginConfig::from_json(r#"{"landlockAbiCeiling": 0}"#).is_err());
        Ok(())
    }
}
