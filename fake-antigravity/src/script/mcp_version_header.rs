//! Which `MCP-Protocol-Version` header the fake's MCP client sends on the requests after
//! `initialize` (`mcp_client.version_header`, docs/antigravity-1.3.0.md §20).
//!
//! The MCP spec (Streamable HTTP, "Protocol Version Header") says a client must send the
//! version it negotiated, the one in the server's `initialize` answer. The real 1.3.0
//! harness's tool rounds work through the TypeScript DSH plugin's bridge, an MCP SDK 1.29
//! server that answers 400 to a header naming a version it does not support, so the
//! harness sends what was negotiated, or no header at all (which that SDK accepts, as the
//! spec lets a server assume its default). The fake can play each, and today's earlier
//! inference (the announced version in every header, read from a wrapper of 1.2.1).

use http::HeaderValue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `MCP-Protocol-Version` header the client sends after `initialize`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VersionHeader {
    /// The version the server's `initialize` answer negotiated (`result.protocolVersion`),
    /// as the MCP spec requires (the default). An answer without one: the announced
    /// version.
    #[default]
    Negotiated,
    /// The version the client announced in `initialize`, whatever the server answered
    /// (the earlier inference from a wrapper of 1.2.1).
    Announced,
    /// No `MCP-Protocol-Version` header at all.
    Absent,
}

impl VersionHeader {
    /// The header value to send after `initialize`, given the announced version and the
    /// `initialize` result; `None`: send no header.
    pub fn after_initialize(self, announced: &str, result: &Value) -> Option<HeaderValue> {
        let version = match self {
            Self::Absent => return None,
            Self::Announced => announced,
            Self::Negotiated => result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or(announced),
        };
        HeaderValue::from_str(version).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_behaviour_picks_its_header() {
        let answer = json!({"protocolVersion": "2025-06-18"});
        let header = |policy: VersionHeader| policy.after_initialize("2026-07-28", &answer);
        assert_eq!(
            header(VersionHeader::Negotiated),
            Some(HeaderValue::from_static("2025-06-18"))
        );
        assert_eq!(
            header(VersionHeader::Announced),
            Some(HeaderValue::from_static("2026-07-28"))
        );
        assert_eq!(header(VersionHeader::Absent), None);
        assert_eq!(
            VersionHeader::Negotiated.after_initialize("2026-07-28", &json!({})),
            Some(HeaderValue::from_static("2026-07-28"))
        );
    }
}
