//! The test addon's overrides document: the adapter settings DSH users cannot set, which
//! `dsh-sim run --real-loop` hands the plugin's test addon (feature `test-hooks`) as JSON
//! in [`VARIABLE`]. This module owns the variable's name and the document's shape
//! ([`TestOverrides`], camelCase, unknown fields refused): dsh-sim writes it
//! (`dsh-sim/src/runner/real_loop/plugin_config.rs`) and the addon reads it
//! (`dsh-plugin/src/test_overrides.rs`). What each setting does is the addon's business;
//! an absent setting changes nothing.
//!
//! The fields are declared in the order the document lists them, so it is the same text
//! whether or not `serde_json` preserves insertion order.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The environment variable the test addon reads the document from.
pub const VARIABLE: &str = "ANTIGRAVITY_ACP_DSH_TEST_OVERRIDES";

/// The overrides document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestOverrides {
    /// The sign-in timeout, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sign_in_timeout_ms: Option<u64>,
    /// A simulated Landlock ABI ceiling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock_abi_ceiling: Option<u8>,
    /// The installer's settings (applied only when the server is installed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<InstallOverrides>,
}

/// The installer's settings in [`TestOverrides`]: its bounds, archive limits, an inline
/// registry document, and where its progress events are appended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstallOverrides {
    /// A registry document given inline, instead of the configured registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_document: Option<String>,
    /// The file the installer's progress events are appended to, one JSON line each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events_file: Option<PathBuf>,
    /// A download that receives no byte for this long fails, in milliseconds.
    pub stall_timeout_ms: u64,
    /// How many times a transient download failure is tried again.
    pub retries: u32,
    /// The first retry's delay, in milliseconds.
    pub retry_backoff_ms: u64,
    /// The largest archive download, in bytes.
    pub max_archive_bytes: u64,
    /// The most entries an archive may have.
    pub max_entries: usize,
    /// The largest single entry, in bytes.
    pub max_entry_bytes: u64,
    /// The most bytes all entries may hold together.
    pub max_total_bytes: u64,
    /// The highest size/compressed-size ratio of a large entry.
    pub max_compression_ratio: u64,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn install() -> InstallOverrides {
        InstallOverrides {
            registry_document: Some("{}".to_owned()),
            events_file: Some(PathBuf::from("/w/events.jsonl")),
            stall_timeout_ms: 1,
            retries: 2,
            retry_backoff_ms: 3,
            max_archive_bytes: 4,
            max_entries: 5,
            max_entry_bytes: 6,
            max_total_bytes: 7,
            max_compression_ratio: 8,
        }
    }

    #[test]
    fn the_document_is_written_in_its_order_and_read_back() {
        let overrides = TestOverrides {
            sign_in_timeout_ms: Some(250),
            landlock_abi_ceiling: Some(3),
            install: Some(install()),
        };
        let text = serde_json::to_string(&overrides).unwrap();
        assert_eq!(
            text,
            r#"{"signInTimeoutMs":250,"landlockAbiCeiling":3,"install":{"registryDocument":"{}","eventsFile":"/w/events.jsonl","stallTimeoutMs":1,"retries":2,"retryBackoffMs":3,"maxArchiveBytes":4,"maxEntries":5,"maxEntryBytes":6,"maxTotalBytes":7,"maxCompressionRatio":8}}"#
        );
        assert_eq!(
            serde_json::from_str::<TestOverrides>(&text).unwrap(),
            overrides
        );
    }

    #[test]
    fn absent_settings_are_left_out() {
        assert_eq!(
            serde_json::to_string(&TestOverrides::default()).unwrap(),
            "{}"
        );
        let bare = InstallOverrides {
            registry_document: None,
            events_file: None,
            ..install()
        };
        let text = serde_json::to_string(&bare).unwrap();
        assert!(text.starts_with(r#"{"stallTimeoutMs":1,"#), "{text}");
    }

    #[test]
    fn unknown_fields_are_refused() {
        assert!(serde_json::from_str::<TestOverrides>(r#"{"signInTimeout":1}"#).is_err());
    }
}
