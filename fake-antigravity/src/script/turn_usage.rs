//! `turn_usage`: the `usage_update` the fake sends at the end of every answered prompt, by
//! default, after the turn's text and before the `session/prompt` answer, as the real
//! 1.3.0 server did on a plain text turn (docs/antigravity-1.3.0.md §13: the TypeScript DSH
//! plugin's probe, PROBE). The probe did not record the values, so the defaults are ours.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The end-of-turn `usage_update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TurnUsageScript {
    /// Send it (default true). A turn whose steps script a `usage` step sends only those;
    /// a cancelled prompt sends none.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Its `size`, the context window (default 1048576; the probe did not record it).
    #[serde(default = "default_window")]
    pub size: u64,
}

impl Default for TurnUsageScript {
    fn default() -> Self {
        Self {
            enabled: true,
            size: default_window(),
        }
    }
}

fn yes() -> bool {
    true
}

fn default_window() -> u64 {
    1_048_576
}

/// Its `used`: a rough count of the tokens in context after the turn (a token per four
/// bytes of the prompt's and the answer's text, at least one).
pub fn tokens_in_context(prompt: &str, answer: &str) -> u64 {
    let bytes = u64::try_from(prompt.len() + answer.len()).unwrap_or(u64::MAX);
    (bytes / 4).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_by_default_with_a_million_token_window() -> Result<(), serde_json::Error> {
        let usage: TurnUsageScript = serde_json::from_str("{}")?;
        assert_eq!(usage, TurnUsageScript::default());
        assert!(usage.enabled);
        assert_eq!(usage.size, 1_048_576);
        assert_eq!(tokens_in_context("abcd", "efgh"), 2);
        assert_eq!(tokens_in_context("", ""), 1);
        Ok(())
    }
}
