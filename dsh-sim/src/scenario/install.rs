//! The `install:` section of a scenario: the registry entry and the ZIP archive the
//! runner serves on loopback, how it serves them, the pin the installer is told, and the
//! state the cache is put in before the chat; plus `expect.install`.

use schemars::JsonSchema;
use serde::Deserialize;

/// How the runner provisions the server for this scenario. With it, the adapter runs
/// the *installed* server (the served archive, whose server member launches the fake)
/// instead of the fake command.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InstallScript {
    /// The archive the registry points at (default `good`).
    #[serde(default)]
    pub archive: ArchiveKind,
    /// The registry document (default `entry`).
    #[serde(default)]
    pub registry: RegistryKind,
    /// How the archive URL answers (default `ok`).
    #[serde(default)]
    pub serve: ServeKind,
    /// The archive digest the installer is told to expect (default `archive`).
    #[serde(default)]
    pub pin: PinKind,
    /// The `sha256` the registry entry itself carries (default `none`).
    #[serde(default)]
    pub registry_sha256: RegistryDigest,
    /// Whether the installer may use plain HTTP to loopback (default true).
    #[serde(default = "default_true")]
    pub insecure_loopback: bool,
    /// A good install is made before the chat, under the served archive's digest (as
    /// `pin: archive`), whatever `pin` the chat's installer is then told (default false;
    /// `cache` steps and some faults make one anyway). With another `pin`, the chat's
    /// launch must not reuse it (B03).
    #[serde(default)]
    pub installed_before: bool,
    /// What is done to the cache before the chat, after one good install (default:
    /// nothing, and no install before the chat).
    #[serde(default)]
    pub cache: Vec<CacheStep>,
    /// Installer processes (`dsh-sim install`) run at once before the chat: the first is
    /// paused mid-extraction until the others wait for the cache lock (default 0).
    #[serde(default)]
    pub concurrent_installers: usize,
    /// An installer process is killed mid-extraction before the chat (default false).
    #[serde(default)]
    pub killed_installer: bool,
    /// The installer's per-entry size cap, in bytes (default: the adapter's).
    #[serde(default)]
    pub max_entry_bytes: Option<u64>,
    /// How long a download may go without a byte (default 300 ms in scenarios).
    #[serde(default)]
    pub stall_timeout_ms: Option<u64>,
    /// Give the installer the registry document itself instead of its URL (default
    /// false), so only the archive URL is fetched.
    #[serde(default)]
    pub registry_inline: bool,
    /// One install fault (what `dsh-sim chaos` adds to an ordinary scenario): the
    /// connection dropped mid-download, the installer killed at a step, or a file changed
    /// between the launch check and the launch (default: none).
    #[serde(default)]
    pub fault: Option<InstallFault>,
}

/// One fault in the install, `install.fault: {kind: ..., ...}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum InstallFault {
    /// The registry host sends the archive's Content-Length and its first `at_byte` bytes,
    /// then drops the connection; so for every try of the chat's first install (the first
    /// and the installer's two retries); later requests get the whole archive. At or past
    /// the archive's size the body is whole (no fault).
    DropConnection {
        /// Bytes of the archive body sent before the drop.
        at_byte: u64,
    },
    /// A `dsh-sim install` process is paused at `at_step` and killed there, before the
    /// chat (the cache keeps whatever that step leaves: a `.part`, a `staging-*`, a
    /// `retired-*`).
    KillInstaller {
        /// Where it dies.
        at_step: KillStep,
    },
    /// A good install is made before the chat; right after the chat's first launch check
    /// passes, the runner changes the installed server member (a harmless extra line, so
    /// it still launches the fake). The launch runs it as it is; the next launch's check
    /// must find the change and install again (see scenarios/README.md).
    SwapFileBeforeLaunch,
}

/// The installer step at which `kill_installer` strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KillStep {
    /// The download's `.part` was just created.
    Download,
    /// The whole archive is downloaded; its digest is not checked yet.
    Verify,
    /// Mid-extraction: the first file is written in `staging-*`.
    Extract,
    /// Every file is extracted; the receipt is not written yet.
    Receipt,
    /// The staged install is complete with its receipt; not yet renamed to `current/`.
    Rename,
    /// A repair (a good install is made and damaged first, unless `cache` damages one):
    /// the new install is published, the replaced one is still in `retired-*`.
    Retire,
}

impl KillStep {
    /// Every step, in the installer's order.
    pub const ALL: [KillStep; 6] = [
        KillStep::Download,
        KillStep::Verify,
        KillStep::Extract,
        KillStep::Receipt,
        KillStep::Rename,
        KillStep::Retire,
    ];

    /// The name `dsh-sim install --pause-at` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            KillStep::Download => "download",
            KillStep::Verify => "verify",
            KillStep::Extract => "extract",
            KillStep::Receipt => "receipt",
            KillStep::Rename => "rename",
            KillStep::Retire => "retire",
        }
    }
}

fn default_true() -> bool {
    true
}

/// The archive the runner builds and serves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArchiveKind {
    /// The server (a script launching the fake), the harness and a sibling runtime file.
    #[default]
    Good,
    /// Adds an entry whose path climbs out with `..`.
    DotDotEntry,
    /// Adds an entry with an absolute path.
    AbsoluteEntry,
    /// Adds a symlink entry pointing outside, and a file through it.
    SymlinkEntry,
    /// Two entries with the same name.
    DuplicateName,
    /// Adds an entry larger than `max_entry_bytes`.
    OversizedEntry,
    /// The harness declares fewer bytes than it holds.
    LyingSize,
    /// Adds a small entry that inflates a thousandfold.
    ZipBomb,
    /// The harness member is missing.
    MissingHarness,
}

/// The registry document the runner serves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RegistryKind {
    /// The published 1.3.0 entry, its archive URL pointed at the runner.
    #[default]
    Entry,
    /// The aggregated index `{"version","agents":[...]}` holding that entry.
    Index,
    /// The entry without this machine's platform.
    NoPlatform,
    /// The entry at another version.
    OtherVersion,
    /// The entry with a malformed `cmd`.
    Malformed,
    /// The entry's archive URL is plain HTTP to a non-loopback host.
    RemoteHttp,
}

/// How the archive URL answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServeKind {
    /// 200 with the whole archive.
    #[default]
    Ok,
    /// 404.
    NotFound,
    /// Half the archive, then nothing more until the runner ends.
    Stall,
    /// Half the archive under the full Content-Length, then the connection closes.
    Truncated,
    /// 503 for the first request, then 200.
    Flaky,
    /// 302 to another path on the same loopback host, which serves the archive.
    RedirectLoopback,
    /// 302 to a plain-HTTP URL on a non-loopback host (never resolved: `.invalid`).
    RedirectInsecure,
}

/// The digest the installer is told.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PinKind {
    /// `--sha256` with the served archive's digest, as for a mirror.
    #[default]
    Archive,
    /// No override: the compiled-in 1.3.0 pins apply.
    Builtin,
    /// `--sha256` with a digest that does not match.
    Wrong,
}

/// The registry entry's own `sha256`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RegistryDigest {
    /// None (as the real entry).
    #[default]
    None,
    /// The archive's digest.
    Matching,
    /// A digest that does not match.
    Wrong,
}

/// One change to a good install before the chat.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheStep {
    /// Flip one byte in the middle of this installed file (same size).
    FlipByte(String),
    /// Cut this installed file to half its size.
    Truncate(String),
    /// Delete this installed file.
    Remove(String),
    /// Clear this installed file's execute bits (`chmod a-x`: same inode, size, content
    /// and mtime; Unix only, so mark the scenario's `platforms`).
    RemoveExecBit(String),
    /// Delete the receipt.
    RemoveReceipt,
    /// Overwrite the receipt with text that is not JSON.
    GarbleReceipt,
    /// Leave a `.part` download behind.
    StalePart,
    /// Leave a staging directory behind.
    StaleStaging,
}

/// What must hold of the install.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InstallExpectation {
    /// Archive requests the runner's server answered, over the whole scenario.
    #[serde(default)]
    pub downloads: Option<usize>,
    /// Registry-document requests the runner's server answered, over the whole scenario.
    #[serde(default)]
    pub registry_fetches: Option<usize>,
    /// What the chat's first launch did.
    #[serde(default)]
    pub outcome: Option<InstallOutcomeKind>,
    /// When refused: the installer's reason (`digest_mismatch`, `unsafe_archive`, ...).
    #[serde(default)]
    pub reason: Option<String>,
    /// Installs during the chat that replaced a broken one (any launch, not only the
    /// first).
    #[serde(default)]
    pub repairs: Option<usize>,
    /// With an `install.fault`: what the launch after the chat did (`installed`,
    /// `reused` or `repaired`; it must leave a verified install in any case).
    #[serde(default)]
    pub next_attempt: Option<InstallOutcomeKind>,
}

/// What the chat's first launch did with the install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InstallOutcomeKind {
    /// There was none; one was made.
    Installed,
    /// The install passed its check.
    Reused,
    /// The install was broken and was made again.
    Repaired,
    /// The install failed: the chat ended with `ACP_INSTALL_FAILED`.
    Refused,
}
