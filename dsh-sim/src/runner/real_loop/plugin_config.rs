//! The adapter's configuration, as the runner made it for dsh-sim's loop, written as the
//! DSH plugin's JSON config (`PluginConfig`, camelCase), so DSH's loop runs the adapter
//! with the same settings. What users cannot set (the sign-in timeout, a simulated Landlock
//! ceiling, the installer's bounds, limits, inline registry and progress events) goes in
//! the test addon's overrides (`test_support::test_overrides`, read by
//! `dsh-plugin/src/test_overrides.rs`, feature `test-hooks`). The conversion is checked by
//! reading the JSON back through the plugin's own `PluginConfig::into_adapter_config`: any
//! other setting the plugin cannot express is named, never silently dropped.

use antigravity_acp::config::PluginConfig;
use antigravity_acp::install::AgentIndexSource;
use antigravity_acp::{AdapterConfig, ConfinementMode, ServerSource};
use serde_json::{Map, Value, json};
use test_support::test_overrides::{InstallOverrides, TestOverrides};

/// The file the test addon appends the installer's progress events to, in `workspace`.
pub fn install_events_file(workspace: &std::path::Path) -> std::path::PathBuf {
    workspace.join("real-loop-install-events.jsonl")
}

/// What the plugin is given: its config, and the test addon's overrides.
#[derive(Debug)]
pub struct PluginSetup {
    /// The plugin's JSON config.
    pub config: Value,
    /// The test addon's overrides.
    pub overrides: TestOverrides,
}

/// `config` as the plugin's JSON config and the test addon's overrides, or which of its
/// settings neither can express. `workspace` holds the install events file.
pub fn plugin_config(
    config: &AdapterConfig,
    workspace: &std::path::Path,
) -> Result<PluginSetup, String> {
    let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let defaults = AdapterConfig::default();
    let mut overrides = TestOverrides {
        sign_in_timeout_ms: (config.sign_in_timeout != defaults.sign_in_timeout)
            .then(|| ms(config.sign_in_timeout)),
        landlock_abi_ceiling: config.landlock_abi_ceiling,
        install: None,
    };
    let mut plugin = Map::new();
    plugin.insert("provider".into(), json!(config.provider));
    match &config.server {
        ServerSource::Command(command) => {
            let env: Map<String, Value> = command
                .env
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            plugin.insert(
                "server".into(),
                json!({"command": command.program, "args": command.args, "env": env}),
            );
        }
        ServerSource::Installed(install) => {
            let registry_document = match &install.agent_index {
                AgentIndexSource::Builtin => None,
                AgentIndexSource::Url(url) => {
                    plugin.insert("registry".into(), json!(url));
                    None
                }
                AgentIndexSource::Document(document) => Some(document.clone()),
            };
            let limits = &install.limits;
            overrides.install = Some(InstallOverrides {
                registry_document,
                events_file: install
                    .progress
                    .is_some()
                    .then(|| install_events_file(workspace)),
                stall_timeout_ms: ms(install.stall_timeout),
                retries: install.retries,
                retry_backoff_ms: ms(install.retry_backoff),
                max_archive_bytes: limits.max_archive_bytes,
                max_entries: limits.max_entries,
                max_entry_bytes: limits.max_entry_bytes,
                max_total_bytes: limits.max_total_bytes,
                max_compression_ratio: limits.max_compression_ratio,
            });
            if let Some(dir) = &install.cache_dir {
                plugin.insert("cacheDir".into(), json!(dir));
            }
            plugin.insert("insecureLoopback".into(), json!(install.insecure_loopback));
            if let Some(sha) = &install.sha256_override {
                plugin.insert("sha256".into(), json!(sha));
            }
        }
    }
    if let Some(root) = &config.scratch_root {
        plugin.insert("scratchRoot".into(), json!(root));
    }
    plugin.insert("timeoutMs".into(), json!(ms(config.timeout)));
    plugin.insert("toolTimeoutMs".into(), json!(ms(config.tool_timeout)));
    plugin.insert(
        "idleProcessTimeoutMs".into(),
        json!(ms(config.idle_process_timeout)),
    );
    plugin.insert("maxIdleProcesses".into(), json!(config.max_idle_processes));
    plugin.insert(
        "maxSessionsPerProcess".into(),
        json!(config.max_sessions_per_process),
    );
    plugin.insert("maxActiveTurns".into(), json!(config.max_active_turns));
    plugin.insert("models".into(), json!(config.models));
    if !config.extra_disabled_tools.is_empty() {
        plugin.insert("disabledTools".into(), json!(config.extra_disabled_tools));
    }
    plugin.insert(
        "confinement".into(),
        json!(match config.confinement {
            ConfinementMode::Required => "required",
            ConfinementMode::BestEffort => "best_effort",
            ConfinementMode::Off => "off",
        }),
    );
    if !config.extra_read_paths.is_empty() {
        plugin.insert("allowRead".into(), json!(config.extra_read_paths));
    }
    if !config.extra_write_paths.is_empty() {
        plugin.insert("allowWrite".into(), json!(config.extra_write_paths));
    }
    plugin.insert("authMethod".into(), json!(config.auth_method.as_str()));
    plugin.insert("agentProfile".into(), json!(config.agent_profile.as_str()));
    let plugin = Value::Object(plugin);
    check_round_trip(config, &plugin)?;
    Ok(PluginSetup {
        config: plugin,
        overrides,
    })
}

/// Reads `plugin` back as the plugin does and names every setting that differs from
/// `config` (what the plugin cannot express); the overrides' settings are not compared.
fn check_round_trip(config: &AdapterConfig, plugin: &Value) -> Result<(), String> {
    let back = PluginConfig::from_json(&plugin.to_string())
        .and_then(PluginConfig::into_adapter_config)
        .map_err(|e| format!("the plugin refuses the config: {e}"))?;
    let mut differ = Vec::new();
    let mut check = |name: &str, same: bool| {
        if !same {
            differ.push(name.to_owned());
        }
    };
    check("provider", back.provider == config.provider);
    // Without it the runner's scratch and leak checks would watch an empty directory.
    check("scratch_root", back.scratch_root == config.scratch_root);
    check("models", back.models == config.models);
    // A server command must arrive exactly; an installed server's options travel in the
    // test overrides, which are not compared here.
    if let (ServerSource::Command(sent), ServerSource::Command(read)) =
        (&config.server, &back.server)
    {
        check("server", sent == read);
    }
    check(
        "shutdown_grace",
        back.shutdown_grace == config.shutdown_grace,
    );
    check("extra_env", back.extra_env == config.extra_env);
    check("timeout", back.timeout == config.timeout);
    check("tool_timeout", back.tool_timeout == config.tool_timeout);
    check(
        "idle_process_timeout",
        back.idle_process_timeout == config.idle_process_timeout,
    );
    check(
        "max_idle_processes",
        back.max_idle_processes == config.max_idle_processes,
    );
    check(
        "max_sessions_per_process",
        back.max_sessions_per_process == config.max_sessions_per_process,
    );
    check(
        "max_active_turns",
        back.max_active_turns == config.max_active_turns,
    );
    check(
        "extra_disabled_tools",
        back.extra_disabled_tools == config.extra_disabled_tools,
    );
    check("confinement", back.confinement == config.confinement);
    check("auth_method", back.auth_method == config.auth_method);
    check("agent_profile", back.agent_profile == config.agent_profile);
    check(
        "extra_read_paths",
        back.extra_read_paths == config.extra_read_paths,
    );
    check(
        "extra_write_paths",
        back.extra_write_paths == config.extra_write_paths,
    );
    if differ.is_empty() {
        Ok(())
    } else {
        Err(format!("no plugin field for {}", differ.join(", ")))
    }
}
