//! The adapter's configuration, as the runner made it for dsh-sim's loop, written as the
//! DSH plugin's JSON config (`PluginConfig`, camelCase), so DSH's loop runs the adapter
//! with the same settings. The conversion is checked by reading the JSON back through
//! the plugin's own `PluginConfig::into_adapter_config`: a setting the plugin cannot
//! express (a test-only knob, an installer hook) is named, never silently dropped.

use antigravity_acp::config::PluginConfig;
use antigravity_acp::install::RegistrySource;
use antigravity_acp::{AdapterConfig, ConfinementMode, ServerSource};
use serde_json::{Map, Value, json};

/// `config` as the plugin's JSON config, or which of its settings the plugin cannot
/// express.
pub fn plugin_config(config: &AdapterConfig) -> Result<Value, String> {
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
            match &install.registry {
                RegistrySource::Builtin => {}
                RegistrySource::Url(url) => {
                    plugin.insert("registry".into(), json!(url));
                }
                _ => return Err("a registry document given inline".to_owned()),
            }
            if install.progress.is_some() {
                return Err("the installer's progress events, which the install judge reads \
                     (the plugin has no hook for them)"
                    .to_owned());
            }
            if let Some(dir) = &install.cache_dir {
                plugin.insert("cacheDir".into(), json!(dir));
            }
            plugin.insert(
                "insecureLoopback".into(),
                json!(install.insecure_loopback),
            );
            if let Some(sha) = &install.sha256_override {
                plugin.insert("sha256".into(), json!(sha));
            }
        }
    }
    if let Some(root) = &config.scratch_root {
        plugin.insert("scratchRoot".into(), json!(root));
    }
    let ms = |d: std::time::Duration| json!(u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    plugin.insert("timeoutMs".into(), ms(config.timeout));
    plugin.insert("toolTimeoutMs".into(), ms(config.tool_timeout));
    plugin.insert(
        "idleProcessTimeoutMs".into(),
        ms(config.idle_process_timeout),
    );
    plugin.insert(
        "maxIdleProcesses".into(),
        json!(config.max_idle_processes),
    );
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
    let plugin = Value::Object(plugin);
    check_round_trip(config, &plugin)?;
    Ok(plugin)
}

/// Reads `plugin` back as the plugin does and names every setting that differs from
/// `config` (what the plugin cannot express).
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
    check("sign_in_timeout", back.sign_in_timeout == config.sign_in_timeout);
    check("shutdown_grace", back.shutdown_grace == config.shutdown_grace);
    check(
        "landlock_abi_ceiling",
        back.landlock_abi_ceiling == config.landlock_abi_ceiling,
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
    check(
        "extra_read_paths",
        back.extra_read_paths == config.extra_read_paths,
    );
    check(
        "extra_write_paths",
        back.extra_write_paths == config.extra_write_paths,
    );
    if let (ServerSource::Installed(want), ServerSource::Installed(got)) =
        (&config.server, &back.server)
    {
        check("install.limits", want.limits == got.limits);
        check("install.stall_timeout", want.stall_timeout == got.stall_timeout);
        check("install.retries", want.retries == got.retries);
        check("install.retry_backoff", want.retry_backoff == got.retry_backoff);
    }
    if differ.is_empty() {
        Ok(())
    } else {
        Err(format!("no plugin field for {}", differ.join(", ")))
    }
}
