//! `SeenCalls`: the `tools/call` requests one bridge has taken, each by its JSON-RPC id,
//! tool name and arguments. The bridge serves stateless HTTP, so rmcp alone would treat a
//! request sent again (the same call replayed on a second connection, or after it was
//! answered) as a new call and DSH would run the tool twice; a request seen before is
//! refused instead, so each call reaches DSH, and is answered, once.

use std::collections::HashSet;
use std::sync::Mutex;

use rmcp::model::RequestId;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The calls one bridge has taken (a digest of each, so a large argument costs 32 bytes).
#[derive(Debug, Default)]
pub(crate) struct SeenCalls {
    seen: Mutex<HashSet<[u8; 32]>>,
}

fn digest(id: &RequestId, name: &str, arguments: &Value) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in [
        serde_json::to_vec(id).unwrap_or_default(),
        name.as_bytes().to_vec(),
        serde_json::to_vec(arguments).unwrap_or_default(),
    ] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(&part);
    }
    hasher.finalize().into()
}

impl SeenCalls {
    /// Records the call; `false` when the same id, tool and arguments came before.
    pub(crate) fn first_time(&self, id: &RequestId, name: &str, arguments: &Value) -> bool {
        let key = digest(id, name, arguments);
        // A poisoned lock (a panicking request) must not let replays through.
        match self.seen.lock() {
            Ok(mut seen) => seen.insert(key),
            Err(poisoned) => poisoned.into_inner().insert(key),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_call_is_new_once_and_other_ids_tools_or_arguments_stay_new() {
        let seen = SeenCalls::default();
        let args = json!({"path": "a"});
        assert!(seen.first_time(&RequestId::Number(3), "read", &args));
        assert!(!seen.first_time(&RequestId::Number(3), "read", &args));
        assert!(seen.first_time(&RequestId::Number(4), "read", &args));
        assert!(seen.first_time(&RequestId::String("3".into()), "read", &args));
        assert!(seen.first_time(&RequestId::Number(3), "write", &args));
        assert!(seen.first_time(&RequestId::Number(3), "read", &json!({"path": "b"})));
        // Id `1` with tool `2read` and id `12` with tool `read` run together as the same
        // bytes: each part is length-prefixed, so they stay two calls.
        assert!(seen.first_time(&RequestId::Number(1), "2read", &args));
        assert!(seen.first_time(&RequestId::Number(12), "read", &args));
    }
}
