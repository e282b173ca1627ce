//! `CatalogCache`: the tool catalogues a provider built lately. DSH offers the same tools
//! on every generate of a chat, so a catalogue (each tool's hashed name and compiled
//! validator) is built once and shared by the turns that offer the same definitions, and
//! the exchange fingerprint reads the catalogue's digest instead of serialising and hashing
//! the definitions on every generate. A few catalogues are kept (a subagent offers its own
//! set beside its parent's); the least recently offered one goes first.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::ToolCatalog;
use crate::contract::ToolSchema;
use crate::error::AdapterError;

/// How many catalogues one provider keeps.
const KEPT: usize = 4;

/// The tools a request offers, as the turn uses them.
#[derive(Debug, Clone)]
pub(crate) struct OfferedTools {
    /// The catalogue, `None` when the request offers no tools.
    pub(crate) catalog: Option<Arc<ToolCatalog>>,
    /// SHA-256 of the definitions as JSON, for the exchange fingerprint.
    pub(crate) digest: [u8; 32],
}

/// One kept catalogue, with the definitions it was built from.
#[derive(Debug)]
struct Kept {
    definitions: Vec<ToolSchema>,
    offered: OfferedTools,
}

/// The catalogues one provider built lately, most recently offered first.
#[derive(Debug, Default)]
pub(crate) struct CatalogCache {
    recent: Mutex<VecDeque<Arc<Kept>>>,
}

impl CatalogCache {
    /// The catalogue of `definitions`: a kept one built from equal definitions, or a new
    /// one (kept for the next request). Definitions that cannot be exported are refused
    /// every time they are offered, never kept.
    pub(crate) fn offer(&self, definitions: &[ToolSchema]) -> Result<OfferedTools, AdapterError> {
        if definitions.is_empty() {
            return Ok(OfferedTools {
                catalog: None,
                digest: digest_of(definitions),
            });
        }
        if let Some(hit) = self.take_kept(definitions) {
            let offered = hit.offered.clone();
            self.keep(hit);
            return Ok(offered);
        }
        let offered = OfferedTools {
            catalog: Some(Arc::new(ToolCatalog::build(definitions)?)),
            digest: digest_of(definitions),
        };
        self.keep(Arc::new(Kept {
            definitions: definitions.to_vec(),
            offered: offered.clone(),
        }));
        Ok(offered)
    }

    /// Removes and returns the kept catalogue of `definitions`, if any.
    fn take_kept(&self, definitions: &[ToolSchema]) -> Option<Arc<Kept>> {
        let mut recent = self.recent.lock().ok()?;
        let at = recent
            .iter()
            .position(|kept| kept.definitions == definitions)?;
        recent.remove(at)
    }

    /// Keeps `kept` as the most recently offered, dropping the oldest beyond [`KEPT`].
    fn keep(&self, kept: Arc<Kept>) {
        if let Ok(mut recent) = self.recent.lock() {
            recent.push_front(kept);
            recent.truncate(KEPT);
        }
    }
}

/// SHA-256 of `definitions` as JSON.
pub(crate) fn digest_of(definitions: &[ToolSchema]) -> [u8; 32] {
    // Serialising our own contract types cannot fail; an empty encoding would only make
    // two catalogues look different, never alike.
    let bytes = serde_json::to_vec(definitions).unwrap_or_default();
    Sha256::digest(&bytes).into()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str) -> ToolSchema {
        ToolSchema {
            name: name.into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        }
    }

    fn same(a: &OfferedTools, b: &OfferedTools) -> bool {
        match (&a.catalog, &b.catalog) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    #[test]
    fn equal_definitions_share_one_catalogue_and_digest() -> crate::TestResult {
        let cache = CatalogCache::default();
        let first = cache.offer(&[tool("a"), tool("b")])?;
        let again = cache.offer(&[tool("a"), tool("b")])?;
        assert!(same(&first, &again));
        assert_eq!(first.digest, again.digest);
        let other = cache.offer(&[tool("a")])?;
        assert!(!same(&first, &other));
        assert_ne!(first.digest, other.digest);
        Ok(())
    }

    #[test]
    fn the_least_recently_offered_catalogue_goes_first() -> crate::TestResult {
        let cache = CatalogCache::default();
        let kept = cache.offer(&[tool("kept")])?;
        let dropped = cache.offer(&[tool("dropped")])?;
        for i in 0..KEPT - 1 {
            cache.offer(&[tool(&format!("t{i}"))])?;
            // Offered again, so it stays the most recent.
            assert!(same(&kept, &cache.offer(&[tool("kept")])?));
        }
        assert!(!same(&dropped, &cache.offer(&[tool("dropped")])?));
        Ok(())
    }

    #[test]
    fn refused_definitions_are_refused_every_time_and_never_kept() {
        let cache = CatalogCache::default();
        let bad = ToolSchema {
            parameters: json!({"type": "string"}),
            ..tool("bad")
        };
        assert!(cache.offer(std::slice::from_ref(&bad)).is_err());
        assert!(cache.offer(&[bad]).is_err());
        assert!(cache.recent.lock().map(|r| r.is_empty()).unwrap_or(false));
    }

    #[test]
    fn no_tools_is_no_catalogue() -> crate::TestResult {
        let offered = CatalogCache::default().offer(&[])?;
        assert!(offered.catalog.is_none());
        Ok(())
    }
}
