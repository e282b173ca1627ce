//! What an installer can be told (`InstallOptions`), the archive bounds (`ArchiveLimits`),
//! and the events it reports while it works (`InstallEvent`).
//!
//! An event is also JSON (serde: `kind` in snake_case, then the variant's fields, e.g.
//! `{"kind":"repairing","why":"..."}`; a step is `{"kind":"step","step":"verify"}`): the
//! plugin's test addon appends events to a file in this shape and dsh-sim's install judge
//! reads them back.

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::space::FreeSpaceProbe;

/// Where the agent index (the document the installer downloads from) comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AgentIndexSource {
    /// The ACP registry's published 1.3.0 entry, compiled into the adapter (the default).
    #[default]
    Builtin,
    /// An agent index document (an agent entry or an aggregated index) at this URL: the
    /// plugin config's `registry`.
    Url(String),
    /// An agent index document given inline (tests, air-gapped mirrors).
    Document(String),
}

/// Bounds on the archive, checked before and during extraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveLimits {
    /// The largest archive download, in bytes (the real one is 333,727,150).
    pub max_archive_bytes: u64,
    /// The most entries an archive may have (the real one has 2).
    pub max_entries: usize,
    /// The largest single entry, declared or read (the real server is 926,533,965).
    pub max_entry_bytes: u64,
    /// The most bytes all entries may hold together.
    pub max_total_bytes: u64,
    /// The highest size/compressed-size ratio of an entry above 1 MiB (zip bombs).
    pub max_compression_ratio: u64,
}

/// 1 GiB.
const GIB: u64 = 1024 * 1024 * 1024;

impl Default for ArchiveLimits {
    fn default() -> Self {
        Self {
            max_archive_bytes: GIB,
            max_entries: 64,
            max_entry_bytes: 2 * GIB,
            max_total_bytes: 4 * GIB,
            max_compression_ratio: 100,
        }
    }
}

/// A step of an install that leaves the cache in a state of its own if the installer
/// dies there (each is reported as [`InstallEvent::Step`] as it begins). Extraction is
/// reported file by file instead ([`InstallEvent::Extracting`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstallStep {
    /// The download's `archive.zip.part` was just created, empty.
    Download,
    /// The whole archive is in `archive.zip.part`; its digest is checked next.
    Verify,
    /// Every file is extracted and fsynced in `staging-*`; the receipt is written next.
    Receipt,
    /// The staged install is complete, receipt included; it is renamed to `current/` next.
    Rename,
    /// A repair only: the new install is `current/`; the replaced one, renamed to
    /// `retired-*`, is removed next.
    Retire,
}

/// What the installer is doing, for progress displays and logs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InstallEvent {
    /// An install step begins.
    #[serde(with = "step_field")]
    Step(InstallStep),
    /// The install was checked and is usable as it is.
    Reused,
    /// The install is missing, partial or corrupt; `why` says what was found.
    Repairing {
        /// What the check found.
        why: String,
    },
    /// Another installer holds the cache's lock; this one waits for it.
    WaitingForLock,
    /// A download starts (`total` from Content-Length, when announced).
    DownloadStarted {
        /// The archive URL.
        url: String,
        /// The announced size.
        total: Option<u64>,
    },
    /// Bytes received so far.
    Downloaded {
        /// Bytes so far.
        bytes: u64,
        /// The announced size.
        total: Option<u64>,
    },
    /// A transient failure; the download is tried again.
    Retrying {
        /// Which attempt comes next (2, 3, ...).
        attempt: u32,
        /// The failure's stable reason.
        reason: Cow<'static, str>,
    },
    /// A file is being extracted.
    Extracting {
        /// Its path inside the install.
        path: String,
    },
    /// A verified install was published.
    Installed {
        /// Whether it replaced a broken one.
        repaired: bool,
    },
}

/// [`InstallEvent::Step`]'s step as a field named `step` (serde cannot put a bare unit
/// variant beside the `kind` tag).
mod step_field {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::InstallStep;

    /// The step as the event's one field.
    #[derive(Serialize, Deserialize)]
    struct Field {
        /// The step.
        step: InstallStep,
    }

    /// Writes `step` as `"step": ...`.
    pub(super) fn serialize<S: Serializer>(step: &InstallStep, to: S) -> Result<S::Ok, S::Error> {
        Field { step: *step }.serialize(to)
    }

    /// Reads the `step` field.
    pub(super) fn deserialize<'de, D: Deserializer<'de>>(from: D) -> Result<InstallStep, D::Error> {
        Field::deserialize(from).map(|field| field.step)
    }
}

/// A callback told every [`InstallEvent`]. It runs on the installer's threads: keep it
/// quick.
#[derive(Clone)]
pub struct ProgressSink(pub Arc<dyn Fn(&InstallEvent) + Send + Sync>);

impl ProgressSink {
    /// A sink that tells `first` (when there is one), then `then`.
    pub fn chain(first: Option<ProgressSink>, then: ProgressSink) -> ProgressSink {
        match first {
            None => then,
            Some(first) => ProgressSink(Arc::new(move |event: &InstallEvent| {
                (first.0)(event);
                (then.0)(event);
            })),
        }
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// Everything an [`Installer`](super::Installer) can be told.
#[derive(Debug, Clone)]
pub struct InstallOptions {
    /// The cache directory; `None`: the platform's per-user cache dir +
    /// `antigravity-acp/1.3.0/<platform>`.
    pub cache_dir: Option<PathBuf>,
    /// Where the agent index comes from.
    pub agent_index: AgentIndexSource,
    /// Allow plain HTTP to loopback hosts (tests, local mirrors). Never to other hosts.
    pub insecure_loopback: bool,
    /// An archive SHA-256 to require instead of the compiled-in pin (a mirror or a test
    /// archive). The agent index's own `sha256`, when present, is checked as well.
    pub sha256_override: Option<String>,
    /// Archive bounds.
    pub limits: ArchiveLimits,
    /// A download that receives no byte for this long fails (and is retried).
    pub stall_timeout: Duration,
    /// How many times a transient download failure is tried again.
    pub retries: u32,
    /// The first retry's delay; each further retry doubles it.
    pub retry_backoff: Duration,
    /// Told every install event.
    pub progress: Option<ProgressSink>,
    /// Where the free space of the cache's disk is read before a download (`None`: the
    /// disk itself; tests inject a figure).
    pub free_space: Option<FreeSpaceProbe>,
}

impl Default for InstallOptions {
    fn default() -> Self {
        Self {
            cache_dir: None,
            agent_index: AgentIndexSource::Builtin,
            insecure_loopback: false,
            sha256_override: None,
            limits: ArchiveLimits::default(),
            stall_timeout: Duration::from_secs(30),
            retries: 2,
            retry_backoff: Duration::from_millis(500),
            progress: None,
            free_space: None,
        }
    }
}

impl InstallOptions {
    /// Tells the progress sink, if any.
    pub(crate) fn report(&self, event: InstallEvent) {
        if let Some(sink) = &self.progress {
            (sink.0)(&event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The events the install judge reads have their documented shape, and every event
    /// reads back as itself.
    #[test]
    fn events_are_json_with_a_snake_case_kind() -> crate::TestResult {
        let shapes = [
            (InstallEvent::Reused, r#"{"kind":"reused"}"#),
            (
                InstallEvent::Repairing { why: "gone".into() },
                r#"{"kind":"repairing","why":"gone"}"#,
            ),
            (
                InstallEvent::Installed { repaired: true },
                r#"{"kind":"installed","repaired":true}"#,
            ),
            (
                InstallEvent::Step(InstallStep::Verify),
                r#"{"kind":"step","step":"verify"}"#,
            ),
            (
                InstallEvent::Retrying {
                    attempt: 2,
                    reason: "stalled".into(),
                },
                r#"{"kind":"retrying","attempt":2,"reason":"stalled"}"#,
            ),
        ];
        for (event, json) in shapes {
            assert_eq!(serde_json::to_string(&event)?, json);
            assert_eq!(serde_json::from_str::<InstallEvent>(json)?, event);
        }
        for event in [
            InstallEvent::WaitingForLock,
            InstallEvent::DownloadStarted {
                url: "https://example.test/a.zip".into(),
                total: None,
            },
            InstallEvent::Downloaded {
                bytes: 3,
                total: Some(9),
            },
            InstallEvent::Extracting {
                path: "bin/server".into(),
            },
        ] {
            let json = serde_json::to_string(&event)?;
            assert_eq!(serde_json::from_str::<InstallEvent>(&json)?, event);
        }
        Ok(())
    }
}
