//! The `MCP-Protocol-Version` header as the guard reads it: absent, a version the bridge
//! serves, a well-formed newer one (a client that keeps sending the `2026-07-28` the
//! 1.3.0 harness announces, after `initialize` negotiated down; 1.3.0 itself sends the
//! negotiated version or none, docs/antigravity-1.3.0.md §20), or malformed; and how a
//! request with a newer one is settled before rmcp sees it.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use rmcp::model::ProtocolVersion;

/// The header's name (lower case, as `http` stores it).
pub(crate) const HEADER: &str = "mcp-protocol-version";

/// The newest version the bridge serves: the newest rmcp revision that still has an
/// `initialize` handshake, which is what `initialize` negotiates down to.
pub(crate) fn newest_served() -> &'static str {
    ProtocolVersion::LATEST_WITH_INITIALIZE.as_str()
}

/// What a request's `MCP-Protocol-Version` header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VersionHeader {
    /// No header (rmcp then assumes `2025-03-26`), or a well-formed version no newer
    /// than [`newest_served`]: passed to rmcp untouched.
    Untouched,
    /// A well-formed version newer than [`newest_served`]: rewritten to it.
    Newer,
    /// Not a `YYYY-MM-DD` date (or sent more than once): refused with 400.
    Malformed,
}

/// Whether `text` is a real calendar-shaped `YYYY-MM-DD` (month 01–12, day 01–31).
fn is_dated_version(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    let digits = |range: std::ops::Range<usize>| {
        text.get(range)
            .filter(|part| part.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|part| part.parse::<u32>().ok())
    };
    matches!(
        (digits(0..4), digits(5..7), digits(8..10)),
        (Some(_), Some(1..=12), Some(1..=31))
    )
}

/// Classifies the request's header.
pub(crate) fn classify(headers: &HeaderMap) -> VersionHeader {
    let mut values = headers.get_all(HEADER).iter();
    let Some(value) = values.next() else {
        return VersionHeader::Untouched;
    };
    if values.next().is_some() {
        return VersionHeader::Malformed;
    }
    match value.to_str() {
        Ok(text) if is_dated_version(text) => {
            if text > newest_served() {
                VersionHeader::Newer
            } else {
                VersionHeader::Untouched
            }
        }
        _ => VersionHeader::Malformed,
    }
}

/// Rewrites a newer version to [`newest_served`]; leaves any other header alone.
pub(crate) fn downgrade_newer(headers: &mut HeaderMap) {
    if classify(headers) == VersionHeader::Newer {
        headers.insert(
            HeaderName::from_static(HEADER),
            HeaderValue::from_static(newest_served()),
        );
    }
}

/// Whether a JSON-RPC body is an `initialize` request.
fn is_initialize(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|message| message.get("method").cloned())
        .is_some_and(|method| method == "initialize")
}

/// Settles a request whose header names a newer version: an `initialize` loses the
/// header (rmcp requires it to equal the body's version, and negotiates down from the
/// body), any other request gets [`newest_served`]. The body is read here, at most
/// `limit` bytes (a larger or unreadable one is answered 413, however it is framed).
pub(crate) async fn settle_newer(request: Request, limit: usize) -> Result<Request, Response> {
    let (mut parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, limit)
        .await
        .map_err(|_| StatusCode::PAYLOAD_TOO_LARGE.into_response())?;
    if is_initialize(&bytes) {
        parts.headers.remove(HEADER);
    } else {
        downgrade_newer(&mut parts.headers);
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    fn with(values: &[&'static str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in values {
            map.append(
                HeaderName::from_static(HEADER),
                HeaderValue::from_static(value),
            );
        }
        map
    }

    #[rstest]
    #[case::absent(&[], VersionHeader::Untouched)]
    #[case::served(&["2025-11-25"], VersionHeader::Untouched)]
    #[case::older(&["2025-06-18"], VersionHeader::Untouched)]
    #[case::harness(&["2026-07-28"], VersionHeader::Newer)]
    #[case::far_future(&["2031-01-01"], VersionHeader::Newer)]
    #[case::word(&["latest"], VersionHeader::Malformed)]
    #[case::empty(&[""], VersionHeader::Malformed)]
    #[case::short_month(&["2026-7-28"], VersionHeader::Malformed)]
    #[case::month_13(&["2026-13-01"], VersionHeader::Malformed)]
    #[case::day_0(&["2026-07-00"], VersionHeader::Malformed)]
    #[case::signed(&["+026-07-28"], VersionHeader::Malformed)]
    #[case::padded(&[" 2026-07-28"], VersionHeader::Malformed)]
    #[case::twice(&["2025-11-25", "2026-07-28"], VersionHeader::Malformed)]
    fn headers_are_classified(#[case] values: &[&'static str], #[case] want: VersionHeader) {
        assert_eq!(classify(&with(values)), want);
    }

    #[test]
    fn initialize_bodies_are_recognised() {
        assert!(is_initialize(
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#
        ));
        assert!(!is_initialize(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
        ));
        assert!(!is_initialize(b"not json"));
    }

    #[test]
    fn only_a_newer_version_is_rewritten() {
        let mut newer = with(&["2026-07-28"]);
        downgrade_newer(&mut newer);
        assert_eq!(
            newer.get(HEADER),
            Some(&HeaderValue::from_static("2025-11-25"))
        );
        let mut older = with(&["2025-06-18"]);
        downgrade_newer(&mut older);
        assert_eq!(
            older.get(HEADER),
            Some(&HeaderValue::from_static("2025-06-18"))
        );
    }
}
