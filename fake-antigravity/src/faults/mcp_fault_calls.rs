//! The MCP client faults of `mcp_client.fault` (types in [`super::mcp_faults`]): how the
//! fake's client misbehaves at one `tools/call`, on real loopback HTTP. Every request a
//! fault sends is journaled (`McpRequest` with its `rpc_id`), and so is every response it
//! gets or the failure in its place (`McpResponse`, same `rpc_id`), one entry per response,
//! so a judge can tell from the journal how often each request was answered. A fault that
//! acted is journaled once (`McpFaultApplied`: its kind, its call, what it did) when its
//! misbehaviour is on the wire: the requests it sends are about to go, the replay after
//! the turn is about to go, the connection was dropped after the request, or was reset at
//! the answer's first byte. A struck call that fails before that (no connection, no answer
//! to reset) journals no `McpFaultApplied`.
//!
//! The call counter, the servers of earlier sessions and the replay waiting for the
//! prompt's result are per process (statics): a fake process is one server.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::faults::mcp_faults::{McpFault, McpFaultKind};
use crate::mcp::exchange::{McpClientError, McpJournal, answer_in_body, is_event_stream};
use crate::state::mcp_servers::HttpMcpServer;

/// How many `tools/call` a burst sends at once: one more than a bridge's 64.
pub const BURST_CALLS: u64 = 65;

/// The `tools/call` requests this process has made (faulted or not).
static CALLS: AtomicUsize = AtomicUsize::new(0);
/// Every `http` MCP server a session of this process was given, in order.
static SERVERS_SEEN: Mutex<Vec<HttpMcpServer>> = Mutex::new(Vec::new());
/// A `call_after_turn` request waiting for its prompt's result.
static REPLAYS: Mutex<Vec<Replay>> = Mutex::new(Vec::new());

/// What a fault sends its requests with: the connection's URL and headers, fresh ids.
#[derive(Debug, Clone)]
pub struct Target {
    pub(crate) http: reqwest::Client,
    pub(crate) url: String,
    /// Every header a `tools/call` of the connection carries (credentials, version,
    /// session), besides `content-type` and `accept`.
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) server: String,
    /// The first of the JSON-RPC ids reserved for the fault.
    pub(crate) first_id: u64,
    pub(crate) journal: McpJournal,
    pub(crate) limit: Duration,
}

#[derive(Debug)]
struct Replay {
    target: Target,
    /// The index of the struck call.
    call: usize,
    id: u64,
    params: Value,
}

/// Counts a `tools/call`; the fault when this is the call it strikes.
pub(crate) fn strikes(fault: Option<McpFault>) -> Option<McpFault> {
    let index = CALLS.fetch_add(1, Ordering::SeqCst);
    fault.filter(|f| f.call == index)
}

/// Journals that `fault` acted, doing `effect`.
fn applied(target: &Target, fault: McpFault, effect: String) {
    target
        .journal
        .fault_applied(fault.kind.name(), fault.call, effect);
}

/// How many JSON-RPC ids a fault of `kind` sends requests under.
pub(crate) fn ids_needed(kind: McpFaultKind) -> u64 {
    match kind {
        McpFaultKind::Burst => BURST_CALLS,
        _ => 1,
    }
}

/// Remembers a session's servers, for a later `stale_token`.
pub(crate) fn remember_servers(servers: &[HttpMcpServer]) {
    if let Ok(mut seen) = SERVERS_SEEN.lock() {
        seen.extend(servers.iter().cloned());
    }
}

/// Sends the `call_after_turn` replay, if one waits: called once a prompt's result was
/// sent.
pub async fn after_prompt_answered() {
    let replays: Vec<Replay> = REPLAYS
        .lock()
        .map(|mut r| std::mem::take(&mut *r))
        .unwrap_or_default();
    for replay in replays {
        let fault = McpFault {
            kind: McpFaultKind::CallAfterTurn,
            call: replay.call,
        };
        applied(
            &replay.target,
            fault,
            format!(
                "POSTed request {} again after the prompt's result",
                replay.id
            ),
        );
        let _ignored = post_journaled(&replay.target, replay.id, &replay.params).await;
    }
}

fn failed(message: String) -> McpClientError {
    McpClientError::Request {
        method: "tools/call".into(),
        message,
    }
}

/// Runs the struck `tools/call` the way `fault` says.
pub(crate) async fn faulty_call(
    target: Target,
    fault: McpFault,
    params: Value,
) -> Result<Value, McpClientError> {
    let id = target.first_id;
    match fault.kind {
        McpFaultKind::DisconnectMidCall | McpFaultKind::ResetWhileResult => {
            raw_call(&target, id, &params, fault).await
        }
        McpFaultKind::CallTwice => {
            applied(
                &target,
                fault,
                format!("POSTed request {id} twice at once, on two connections"),
            );
            let (first, second) = tokio::join!(
                post_journaled(&target, id, &params),
                post_journaled(&target, id, &params)
            );
            match (first, second) {
                (Ok(result), _) | (_, Ok(result)) => Ok(result),
                (Err(error), _) => Err(error),
            }
        }
        McpFaultKind::CallAfterTurn => {
            let outcome = post_journaled(&target, id, &params).await;
            if let Ok(mut replays) = REPLAYS.lock() {
                replays.push(Replay {
                    target,
                    call: fault.call,
                    id,
                    params,
                });
            }
            outcome
        }
        McpFaultKind::StaleToken => {
            let mut stale = target.clone();
            let token = stale_authorization(&target);
            let whose = if token == NEVER_ISSUED {
                "a bearer token no bridge issued"
            } else {
                "the Authorization of an earlier session's server"
            };
            applied(&target, fault, format!("sent request {id} with {whose}"));
            stale
                .headers
                .retain(|(name, _)| name != http::header::AUTHORIZATION);
            stale.headers.push((http::header::AUTHORIZATION, token));
            post_journaled(&stale, id, &params).await
        }
        McpFaultKind::Burst => {
            applied(
                &target,
                fault,
                format!(
                    "POSTed {BURST_CALLS} calls at once (ids {id} to {})",
                    id + BURST_CALLS - 1
                ),
            );
            let calls = (0..BURST_CALLS).map(|n| post_journaled(&target, id + n, &params));
            let mut outcomes = futures::future::join_all(calls).await.into_iter();
            outcomes
                .next()
                .unwrap_or_else(|| Err(failed("the burst sent nothing".into())))
        }
    }
}

/// The `Authorization` of the latest earlier server of the same name whose value differs
/// from the current one; else a well-formed bearer token nobody issued.
fn stale_authorization(target: &Target) -> HeaderValue {
    let current = target
        .headers
        .iter()
        .find(|(name, _)| name == http::header::AUTHORIZATION)
        .map(|(_, value)| value.clone());
    let earlier = SERVERS_SEEN.lock().ok().and_then(|seen| {
        seen.iter()
            .rev()
            .filter(|server| server.name == target.server)
            .flat_map(|server| server.headers.iter())
            .filter(|h| h.name.eq_ignore_ascii_case("authorization"))
            .filter_map(|h| HeaderValue::from_str(&h.value).ok())
            .find(|value| Some(value) != current.as_ref())
    });
    earlier.unwrap_or_else(|| HeaderValue::from_static(NEVER_ISSUED))
}

/// A bearer token of the bridge's shape (64 hex digits) that no bridge issued.
const NEVER_ISSUED: &str =
    "Bearer 0000000000000000000000000000000000000000000000000000000000000000";

/// POSTs one `tools/call` under `id`, journaling the request and its response.
async fn post_journaled(target: &Target, id: u64, params: &Value) -> Result<Value, McpClientError> {
    target
        .journal
        .request("tools/call", params.clone(), Some(id));
    let outcome = tokio::time::timeout(target.limit, post(target, id, params))
        .await
        .unwrap_or_else(|_| Err(format!("timed out after {} ms", target.limit.as_millis())));
    target.journal.response(
        "tools/call",
        Some(params.clone()),
        outcome.clone(),
        Some(id),
    );
    outcome.map_err(failed)
}

fn body_of(id: u64, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// One POST; the `CallToolResult`, or why there is none (`HTTP <status>`, a JSON-RPC
/// error, a transport failure).
async fn post(target: &Target, id: u64, params: &Value) -> Result<Value, String> {
    let mut request = target
        .http
        .post(&target.url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    for (name, value) in &target.headers {
        request = request.header(name, value);
    }
    let response = request
        .body(body_of(id, params))
        .send()
        .await
        .map_err(|e| format!("transport: {e}"))?;
    let status = response.status();
    let event_stream = is_event_stream(response.headers());
    let text = response
        .text()
        .await
        .map_err(|e| format!("transport: {e}"))?;
    if !status.is_success() {
        return Err(format!("HTTP {}", status.as_u16()));
    }
    let message = answer_in_body(&text, event_stream, id)
        .ok_or_else(|| "no JSON-RPC answer in the body".to_owned())?;
    if let Some(error) = message.get("error") {
        return Err(format!("JSON-RPC error {error}"));
    }
    message
        .get("result")
        .cloned()
        .ok_or_else(|| "an answer with no result".to_owned())
}

/// `host:port` and the path of an `http://` URL.
fn split_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("http://")?;
    Some(match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    })
}

/// The request written by hand on a fresh connection, then dropped (`disconnect_mid_call`)
/// or reset at the first byte of the answer (`reset_while_result`).
async fn raw_call(
    target: &Target,
    id: u64,
    params: &Value,
    fault: McpFault,
) -> Result<Value, McpClientError> {
    target
        .journal
        .request("tools/call", params.clone(), Some(id));
    let outcome = tokio::time::timeout(target.limit, raw_exchange(target, id, params, fault))
        .await
        .unwrap_or_else(|_| format!("timed out after {} ms", target.limit.as_millis()));
    target.journal.response(
        "tools/call",
        Some(params.clone()),
        Err(outcome.clone()),
        Some(id),
    );
    Err(failed(outcome))
}

/// What became of a hand-written request, as the journal's error text; journals the fault
/// once it acted.
async fn raw_exchange(target: &Target, id: u64, params: &Value, fault: McpFault) -> String {
    let Some((authority, path)) = split_url(&target.url) else {
        return format!("not an http:// URL: {}", target.url);
    };
    let mut stream = match TcpStream::connect(authority).await {
        Ok(stream) => stream,
        Err(e) => return format!("transport: {e}"),
    };
    let body = body_of(id, params);
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {}\r\n",
        body.len()
    )
    .into_bytes();
    for (name, value) in &target.headers {
        request.extend_from_slice(name.as_str().as_bytes());
        request.extend_from_slice(b": ");
        request.extend_from_slice(value.as_bytes());
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"\r\n");
    request.extend_from_slice(body.as_bytes());
    if let Err(e) = stream.write_all(&request).await {
        return format!("transport: {e}");
    }
    if fault.kind == McpFaultKind::DisconnectMidCall {
        let _closing = stream.shutdown().await;
        drop(stream);
        applied(
            target,
            fault,
            format!("wrote request {id} whole, then closed the connection before any answer"),
        );
        return "disconnected by the client before any answer (fault disconnect_mid_call)".into();
    }
    let mut first = [0u8; 1];
    let read = stream.read(&mut first).await;
    // Without SO_LINGER 0 the close would be a clean FIN, not a reset.
    let lingerless = stream.set_zero_linger().is_ok();
    drop(stream);
    match read {
        Ok(0) => "the bridge closed the connection before answering".into(),
        Ok(_) => {
            let how = if lingerless {
                "reset the connection (TCP RST)"
            } else {
                "closed the connection (SO_LINGER 0 refused: a FIN, not a reset)"
            };
            applied(
                target,
                fault,
                format!("{how} at the first byte of the answer to request {id}"),
            );
            "reset by the client at the first byte of the answer (fault reset_while_result)".into()
        }
        Err(e) => format!("transport: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_authority_and_path() {
        assert_eq!(
            split_url("http://127.0.0.1:4000/mcp"),
            Some(("127.0.0.1:4000", "/mcp"))
        );
        assert_eq!(split_url("http://h:1"), Some(("h:1", "/")));
        assert_eq!(split_url("https://h/mcp"), None);
    }

    #[test]
    fn only_the_struck_call_is_faulted() {
        // The counter is per process: read where it stands, then strike the next call.
        let next = CALLS.load(Ordering::SeqCst);
        let fault = Some(McpFault {
            kind: McpFaultKind::Burst,
            call: next + 1,
        });
        assert_eq!(strikes(fault), None);
        assert_eq!(strikes(fault), fault);
        assert_eq!(strikes(fault), None);
        assert_eq!(ids_needed(McpFaultKind::Burst), 65);
        assert_eq!(ids_needed(McpFaultKind::CallTwice), 1);
    }
}
