//! Claim IDs: `C01`..`C73` for the seed design's claims, `B01`..`B10` for those beyond it.
//! A scenario's `covers` list is checked while parsing, so a bad ID has a location.

use serde::{Deserialize, Deserializer, de};

/// The highest design claim number (`C73`).
const LAST_DESIGN_CLAIM: u32 = 73;
/// The highest beyond-the-design claim number (`B10`).
const LAST_BEYOND_CLAIM: u32 = 10;

/// A valid claim ID such as `C18` or `B01`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClaimId(String);

impl ClaimId {
    /// The ID as written, e.g. `C18`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Checks `text` and wraps it.
    pub fn parse(text: &str) -> Option<Self> {
        is_claim_id(text).then(|| Self(text.to_owned()))
    }
}

impl std::fmt::Display for ClaimId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ClaimId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).ok_or_else(|| {
            de::Error::custom(format!(
                "unknown claim ID `{text}`: expected C01..C{LAST_DESIGN_CLAIM} or B01..B{LAST_BEYOND_CLAIM:02}"
            ))
        })
    }
}

impl schemars::JsonSchema for ClaimId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ClaimId".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A claim ID: C01..C73 for the design's claims, B01..B10 beyond it.",
            "type": "string",
            "enum": all_claim_ids(),
        })
    }
}

/// Whether `text` is exactly one of the known claim IDs.
pub fn is_claim_id(text: &str) -> bool {
    let (last, digits) = match text.split_at_checked(1) {
        Some(("C", digits)) => (LAST_DESIGN_CLAIM, digits),
        Some(("B", digits)) => (LAST_BEYOND_CLAIM, digits),
        _ => return false,
    };
    digits.len() == 2
        && digits.bytes().all(|b| b.is_ascii_digit())
        && digits.parse::<u32>().is_ok_and(|n| (1..=last).contains(&n))
}

/// Every known claim ID, `C01`..`C73` then `B01`..`B10`.
pub fn all_claim_ids() -> Vec<String> {
    (1..=LAST_DESIGN_CLAIM)
        .map(|n| format!("C{n:02}"))
        .chain((1..=LAST_BEYOND_CLAIM).map(|n| format!("B{n:02}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_exactly_the_known_ids() {
        assert!(is_claim_id("C01"));
        assert!(is_claim_id("C73"));
        assert!(is_claim_id("B05"));
        assert!(is_claim_id("B07"));
        assert!(is_claim_id("B08"));
        assert!(is_claim_id("B10"));
        for bad in ["C00", "C74", "B11", "C1", "c01", "C001", "X01", "", "C+1"] {
            assert!(!is_claim_id(bad), "{bad}");
        }
        assert_eq!(all_claim_ids().len(), 83);
    }
}
