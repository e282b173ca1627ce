//! The bridge's HTTP guard: before rmcp sees a request, it must be a POST with the turn's
//! bearer token, the bridge's own `Host`, no browser `Origin`, and a well-formed
//! `MCP-Protocol-Version` if any. A well-formed version newer than the bridge serves is
//! rewritten to the newest it serves, the version `initialize` negotiated, so rmcp answers
//! instead of refusing with 400 (on an `initialize` itself the header is dropped: rmcp
//! negotiates from the body). This is tolerance, not what 1.3.0 is known to send: its
//! harness announces `2026-07-28`, but its tool rounds work through an MCP SDK 1.29 server
//! that answers 400 to an unsupported header, so it sends the negotiated version (as the
//! MCP spec requires) or none (docs/antigravity-1.3.0.md §20).

mod protocol_version;
#[cfg(test)]
mod version_over_http;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// What the guard checks requests against.
#[derive(Debug)]
pub(crate) struct GuardPolicy {
    /// `Bearer <token>`, the exact Authorization value.
    pub(crate) authorization: String,
    /// The only acceptable `Host` values (`127.0.0.1:<port>`, `localhost:<port>`).
    pub(crate) hosts: Vec<String>,
}

/// Compares two byte strings in time that depends only on their lengths.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn refuse(status: StatusCode, extra: Option<(header::HeaderName, &'static str)>) -> Response {
    let mut response = status.into_response();
    if let Some((name, value)) = extra {
        response
            .headers_mut()
            .insert(name, HeaderValue::from_static(value));
    }
    response
}

/// The status a request is refused with, if any.
pub(crate) fn check(
    policy: &GuardPolicy,
    method: &Method,
    headers: &HeaderMap,
) -> Option<Response> {
    if method != Method::POST {
        return Some(refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            Some((header::ALLOW, "POST")),
        ));
    }
    if headers.contains_key(header::ORIGIN) {
        return Some(refuse(StatusCode::FORBIDDEN, None));
    }
    let host_ok = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|host| policy.hosts.iter().any(|allowed| allowed == host));
    if !host_ok {
        return Some(refuse(StatusCode::MISDIRECTED_REQUEST, None));
    }
    let token_ok = headers
        .get(header::AUTHORIZATION)
        .is_some_and(|value| constant_time_eq(value.as_bytes(), policy.authorization.as_bytes()));
    if !token_ok {
        return Some(refuse(
            StatusCode::UNAUTHORIZED,
            Some((header::WWW_AUTHENTICATE, "Bearer")),
        ));
    }
    if protocol_version::classify(headers) == protocol_version::VersionHeader::Malformed {
        return Some(refuse(StatusCode::BAD_REQUEST, None));
    }
    None
}

/// axum middleware applying [`check`].
pub(crate) async fn guard(
    State(policy): State<Arc<GuardPolicy>>,
    mut request: Request,
    next: Next,
) -> Response {
    if let Some(refusal) = check(&policy, request.method(), request.headers()) {
        return refusal;
    }
    if protocol_version::classify(request.headers()) == protocol_version::VersionHeader::Newer {
        request = match protocol_version::settle_newer(request, super::MAX_BODY_BYTES).await {
            Ok(settled) => settled,
            Err(refusal) => return refusal,
        };
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use rstest::rstest;

    use super::*;

    fn policy() -> GuardPolicy {
        GuardPolicy {
            authorization: "Bearer abc".into(),
            hosts: vec!["127.0.0.1:4000".into()],
        }
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_static(v));
        }
        map
    }

    #[rstest]
    #[case::get(Method::GET, &[("host", "127.0.0.1:4000"), ("authorization", "Bearer abc")], Some(405))]
    #[case::origin(Method::POST, &[("host", "127.0.0.1:4000"), ("authorization", "Bearer abc"), ("origin", "https://evil.example")], Some(403))]
    #[case::foreign_host(Method::POST, &[("host", "evil.example:4000"), ("authorization", "Bearer abc")], Some(421))]
    #[case::no_token(Method::POST, &[("host", "127.0.0.1:4000")], Some(401))]
    #[case::wrong_token(Method::POST, &[("host", "127.0.0.1:4000"), ("authorization", "Bearer abd")], Some(401))]
    // Two differing bytes whose differences are equal (a^b == b^a): an XOR fold would
    // let them cancel out.
    #[case::two_swapped_bytes(Method::POST, &[("host", "127.0.0.1:4000"), ("authorization", "Bearer bac")], Some(401))]
    #[case::two_bytes_differing_alike(Method::POST, &[("host", "127.0.0.1:4000"), ("authorization", "Bearer `cc")], Some(401))]
    #[case::token_longer(Method::POST, &[("host", "127.0.0.1:4000"), ("authorization", "Bearer abcd")], Some(401))]
    #[case::token_case(Method::POST, &[("host", "127.0.0.1:4000"), ("authorization", "bearer abc")], Some(401))]
    #[case::token_prefix(Method::POST, &[("host", "127.0.0.1:4000"), ("authorization", "Bearer ab")], Some(401))]
    #[case::malformed_version(Method::POST, &[("host", "127.0.0.1:4000"), ("authorization", "Bearer abc"), ("mcp-protocol-version", "2026-7-28")], Some(400))]
    #[case::newer_version(Method::POST, &[("host", "127.0.0.1:4000"), ("authorization", "Bearer abc"), ("mcp-protocol-version", "2026-07-28")], None)]
    #[case::ok(Method::POST, &[("host", "127.0.0.1:4000"), ("authorization", "Bearer abc")], None)]
    fn requests_are_refused_with_the_right_status(
        #[case] method: Method,
        #[case] pairs: &[(&'static str, &'static str)],
        #[case] status: Option<u16>,
    ) {
        let got = check(&policy(), &method, &headers(pairs)).map(|r| r.status().as_u16());
        assert_eq!(got, status);
    }

    #[rstest]
    #[case::equal(b"abc", b"abc", true)]
    #[case::empty(b"", b"", true)]
    #[case::one_byte(b"abc", b"abd", false)]
    #[case::swapped(b"abc", b"bac", false)]
    #[case::two_alike_differences(b"abc", b"`cc", false)]
    #[case::first_and_last(b"abcdef", b"bbcdee", false)]
    #[case::shorter(b"abc", b"ab", false)]
    #[case::longer(b"ab", b"abc", false)]
    fn constant_time_eq_is_equality(#[case] a: &[u8], #[case] b: &[u8], #[case] equal: bool) {
        assert_eq!(constant_time_eq(a, b), equal);
    }
}
