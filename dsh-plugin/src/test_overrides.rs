//! Feature `test-hooks` only (the debug addon CI tests; never a release): the adapter
//! settings DSH users cannot set, taken from `ANTIGRAVITY_ACP_DSH_TEST_OVERRIDES` (JSON)
//! when a `Provider` is built, so `dsh-sim run --real-loop` runs a scenario through DSH's
//! own loop with the settings dsh-sim's loop gives the adapter: the sign-in timeout in
//! milliseconds, a simulated Landlock ABI ceiling, and the installer's millisecond stall
//! and retry bounds, archive limits, an inline registry document and its progress events
//! (appended to a file as JSON lines, `InstallEvent`'s serde shape, which the install
//! judge reads). The variable and the document are `test_support::test_overrides`'s.
//! Unset: nothing changes. A broken value is refused `ACP_INVALID_CONFIG` naming only the
//! variable.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use antigravity_acp::AdapterConfig;
use antigravity_acp::ServerSource;
use antigravity_acp::install::{AgentIndexSource, ArchiveLimits, InstallEvent, ProgressSink};
use test_support::test_overrides::{TestOverrides, VARIABLE};

use crate::failure::{INVALID_CONFIG, Result, thrown};

/// Applies the overrides in the environment, if any, to `config`.
pub fn apply(config: &mut AdapterConfig) -> Result<()> {
    let Some(text) = std::env::var_os(VARIABLE) else {
        return Ok(());
    };
    let overrides: TestOverrides = serde_json::from_str(&text.to_string_lossy())
        .map_err(|_| thrown(INVALID_CONFIG, format!("{VARIABLE} is not its JSON shape")))?;
    if let Some(ms) = overrides.sign_in_timeout_ms {
        config.sign_in_timeout = Duration::from_millis(ms);
    }
    if let Some(ceiling) = overrides.landlock_abi_ceiling {
        config.landlock_abi_ceiling = Some(ceiling);
    }
    if let (Some(install), ServerSource::Installed(options)) =
        (overrides.install, &mut config.server)
    {
        options.stall_timeout = Duration::from_millis(install.stall_timeout_ms);
        options.retries = install.retries;
        options.retry_backoff = Duration::from_millis(install.retry_backoff_ms);
        options.limits = ArchiveLimits {
            max_archive_bytes: install.max_archive_bytes,
            max_entries: install.max_entries,
            max_entry_bytes: install.max_entry_bytes,
            max_total_bytes: install.max_total_bytes,
            max_compression_ratio: install.max_compression_ratio,
        };
        if let Some(document) = install.registry_document {
            options.agent_index = AgentIndexSource::Document(document);
        }
        if let Some(path) = install.events_file {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|_| {
                    thrown(
                        INVALID_CONFIG,
                        format!("{VARIABLE}: cannot open its events file"),
                    )
                })?;
            let file = Arc::new(Mutex::new(file));
            options.progress = Some(ProgressSink(Arc::new(move |event: &InstallEvent| {
                // A lost line fails the install judge's outcome check, never the install.
                if let (Ok(line), Ok(mut file)) = (serde_json::to_string(event), file.lock()) {
                    let _lost = writeln!(file, "{line}");
                }
            })));
        }
    }
    Ok(())
}
