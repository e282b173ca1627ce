//! The scenario keys of B08's proofs (no DSH conversation outlives its turn on disk):
//! the crash leftovers a scenario plants before the provider starts (`dsh.leftovers`),
//! and the declared exemption of a scenario whose sessions deliberately outlive the run
//! (`leaves_conversations`). The runner plants them (`runner/leftovers.rs`) and judges
//! them after disposal (`runner/judge/conversations.rs`).

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, de};

use super::validation::Check;

/// The most sessions one planted ledger may list (a handful proves the sweep).
pub const MAX_PLANTED_SESSIONS: usize = 16;

/// A session ledger planted before the provider starts, as a DSH process of the same
/// scratch root left it (the ledger format of the B08 contract: `home <GEMINI_HOME>`,
/// then one `session <id>` line per session): in the scratch root, a scratch folder
/// `antigravity-acp-XXXXXX/` and its ledger `antigravity-acp-XXXXXX.sessions`; in the
/// scenario's `GEMINI_HOME`, each listed session's conversation files
/// (`antigravity-acp/conversations/<id>.db`, `.db-wal`, `.db-shm`, `.meta` and
/// `antigravity-acp/brain/<id>/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlantedLedger {
    /// Whose ledger it is.
    pub owner: LedgerOwner,
    /// How many sessions it lists (0 to 16), each with its conversation files.
    pub sessions: usize,
}

/// The owner of a planted ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LedgerOwner {
    /// A process that crashed: nobody holds the ledger's lock, so the provider's sweep
    /// must remove its sessions' files, its scratch folder and the ledger.
    Dead,
    /// A live DSH process: the runner holds the ledger's OS advisory lock (`File::lock`)
    /// for the whole run, so the sweep must leave the ledger, its scratch folder and its
    /// sessions' files exactly as they were.
    Live,
}

impl Check for PlantedLedger {
    fn check(&self) -> Result<(), String> {
        if self.sessions > MAX_PLANTED_SESSIONS {
            return Err(format!(
                "a planted ledger lists at most {MAX_PLANTED_SESSIONS} sessions, not {} \
                 (field `sessions`)",
                self.sessions
            ));
        }
        Ok(())
    }
}

/// `deserialize_with` helper for `leaves_conversations`: the exemption must say why.
pub(super) fn leaves_conversations<'de, D>(deserializer: D) -> Result<Option<String>, D::Error>
where
    D: Deserializer<'de>,
{
    let reason = Option::<String>::deserialize(deserializer)?;
    if reason.as_deref().is_some_and(|text| text.trim().is_empty()) {
        return Err(de::Error::custom(
            "`leaves_conversations` needs a reason: why this scenario's sessions outlive it",
        ));
    }
    Ok(reason)
}
