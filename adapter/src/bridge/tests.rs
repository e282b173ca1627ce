//! The bridge over real loopback HTTP: refusals with their statuses, the body limit, and
//! an MCP round trip whose call is parked until the turn answers it.

use std::time::Duration;

use agent_client_protocol::v1::schema::McpServer;
use serde_json::{Value, json};

use super::*;
use crate::TestResult;
use crate::contract::ToolSchema;
use test_support::Failure;

const BOUND: Duration = Duration::from_secs(10);

struct Running {
    bridge: Bridge,
    calls: mpsc::Receiver<ParkedCall>,
    url: String,
    authorization: String,
    client: reqwest::Client,
}

async fn running() -> Result<Running, Failure> {
    running_with_queue(8).await
}

/// A bridge whose parked calls queue up to `queue` deep before the handler waits.
async fn running_with_queue(queue: usize) -> Result<Running, Failure> {
    let catalog = ToolCatalog::build(&[ToolSchema {
        name: "read.file".into(),
        description: "Reads a file".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string", "minLength": 2}}, "required": ["path"], "additionalProperties": false}),
    }])?;
    let (calls_tx, calls) = mpsc::channel(queue);
    let bridge = Bridge::start(Arc::new(catalog), calls_tx, &CancellationToken::new()).await?;
    let McpServer::Http(http) = bridge.descriptor() else {
        return Err("not an http descriptor".into());
    };
    assert_eq!(http.name, BRIDGE_SERVER_NAME);
    assert!(http.url.starts_with("http://127.0.0.1:"), "{}", http.url);
    let authorization = http.headers[0].value.clone();
    assert_eq!(http.headers[0].name, "Authorization");
    Ok(Running {
        bridge,
        calls,
        url: http.url,
        authorization,
        client: reqwest::Client::new(),
    })
}

impl Running {
    fn post(&self) -> reqwest::RequestBuilder {
        self.client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
    }

    async fn rpc(&self, body: Value) -> Result<Value, Failure> {
        // Bounded: a call that wrongly parks must fail the test, not hang it.
        let response = tokio::time::timeout(
            BOUND,
            self.post()
                .header("authorization", &self.authorization)
                .body(body.to_string())
                .send(),
        )
        .await??;
        assert_eq!(response.status(), 200);
        Ok(serde_json::from_str(&response.text().await?)?)
    }

    /// Sends a `tools/call` in the background; the task yields the response body.
    fn spawn_call(
        &self,
        id: u64,
        name: &str,
        arguments: Value,
    ) -> tokio::task::JoinHandle<Result<String, reqwest::Error>> {
        let request = self
            .post()
            .header("authorization", &self.authorization)
            .body(call(id, name, arguments).to_string());
        tokio::spawn(async move { request.send().await?.text().await })
    }
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

#[tokio::test]
async fn refusals_carry_the_right_status() -> TestResult {
    let bridge = running().await?;
    let token = bridge.authorization.clone();
    let ok_body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let get = bridge
        .client
        .get(&bridge.url)
        .header("authorization", &token)
        .send()
        .await?;
    assert_eq!(get.status(), 405);
    let no_token = bridge.post().body(ok_body.clone()).send().await?;
    assert_eq!(no_token.status(), 401);
    let wrong = bridge
        .post()
        .header("authorization", "Bearer 00")
        .body(ok_body.clone())
        .send()
        .await?;
    assert_eq!(wrong.status(), 401);
    let origin = bridge
        .post()
        .header("authorization", &token)
        .header("origin", "http://127.0.0.1")
        .body(ok_body.clone())
        .send()
        .await?;
    assert_eq!(origin.status(), 403);
    let host = bridge
        .post()
        .header("authorization", &token)
        .header("host", "attacker.example")
        .body(ok_body.clone())
        .send()
        .await?;
    assert_eq!(host.status(), 421);
    let huge = format!("{{\"pad\":\"{}\"}}", "x".repeat(MAX_BODY_BYTES));
    let too_big = bridge
        .post()
        .header("authorization", &token)
        .body(huge)
        .send()
        .await?;
    assert_eq!(too_big.status(), 413);
    let other_path = bridge.url.replace("/mcp", "/other");
    let elsewhere = bridge
        .client
        .post(other_path)
        .header("authorization", &token)
        .body(ok_body)
        .send()
        .await?;
    assert_eq!(elsewhere.status(), 404);
    bridge.bridge.close().await;
    Ok(())
}

#[tokio::test]
async fn tools_list_shows_hashed_names_with_original_titles() -> TestResult {
    let bridge = running().await?;
    let listed = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await?;
    let tool = &listed["result"]["tools"][0];
    assert_eq!(tool["title"], "read.file");
    let name = tool["name"].as_str().ok_or("the tool has no name")?;
    assert!(name.starts_with("read_file_"), "{name}");
    assert_eq!(tool["inputSchema"]["properties"]["path"]["minLength"], 2);
    bridge.bridge.close().await;
    Ok(())
}

/// The next parked call, within the bound.
async fn next_parked(bridge: &mut Running) -> Result<ParkedCall, Failure> {
    Ok(tokio::time::timeout(BOUND, bridge.calls.recv())
        .await?
        .ok_or("the bridge closed its call channel")?)
}

/// The JSON body a background call ends with, within the bound.
async fn answer_of(
    pending: tokio::task::JoinHandle<Result<String, reqwest::Error>>,
) -> Result<Value, Failure> {
    let body = tokio::time::timeout(BOUND, pending).await???;
    Ok(serde_json::from_str(&body)?)
}

#[tokio::test]
async fn invalid_arguments_never_reach_dsh() -> TestResult {
    let mut bridge = running().await?;
    let name = catalog::mcp_name("read.file");
    let invalid = bridge.rpc(call(1, &name, json!({"path": "x"}))).await?;
    assert_eq!(invalid["result"]["isError"], true, "{invalid}");
    assert!(
        bridge.calls.try_recv().is_err(),
        "an invalid call reached DSH"
    );
    bridge.bridge.close().await;
    Ok(())
}

#[tokio::test]
async fn an_unknown_tool_is_an_invalid_params_error() -> TestResult {
    let mut bridge = running().await?;
    let unknown = bridge.rpc(call(2, "nope", json!({}))).await?;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        bridge.calls.try_recv().is_err(),
        "a call of an unknown tool reached DSH"
    );
    bridge.bridge.close().await;
    Ok(())
}

#[tokio::test]
async fn a_valid_call_parks_until_answered() -> TestResult {
    let mut bridge = running().await?;
    let name = catalog::mcp_name("read.file");
    let pending = bridge.spawn_call(3, &name, json!({"path": "notes.md"}));
    let parked = next_parked(&mut bridge).await?;
    assert_eq!(parked.tool_name, "read.file");
    assert_eq!(parked.arguments, json!({"path": "notes.md"}));
    assert!(parked.call_id.starts_with("call_"));
    assert!(
        !pending.is_finished(),
        "the HTTP request must stay pending while parked"
    );
    assert!(parked.resolve(ToolReply {
        text: "denied by DSH".into(),
        is_error: true
    }));
    let answer = answer_of(pending).await?;
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(answer["result"]["content"][0]["text"], "denied by DSH");
    bridge.bridge.close().await;
    Ok(())
}

/// C16: every call DSH sees carries a fresh correlation id of its own: not the server's
/// JSON-RPC id, not derived from the tool or its arguments, never repeated.
#[tokio::test]
async fn every_call_gets_a_fresh_correlation_id() -> TestResult {
    let mut bridge = running().await?;
    let name = catalog::mcp_name("read.file");
    // The same tool and arguments twice (under two JSON-RPC ids: the same id again is a
    // replay, refused below).
    let first = bridge.spawn_call(3, &name, json!({"path": "notes.md"}));
    let one = next_parked(&mut bridge).await?;
    let second = bridge.spawn_call(4, &name, json!({"path": "notes.md"}));
    let two = next_parked(&mut bridge).await?;
    for parked in [&one, &two] {
        let hex = parked.call_id.strip_prefix("call_").unwrap_or_default();
        assert!(
            hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit()),
            "{}",
            parked.call_id
        );
    }
    assert_ne!(one.call_id, two.call_id, "a correlation id was reused");
    for (parked, pending) in [(one, first), (two, second)] {
        assert!(parked.resolve(ToolReply {
            text: "ok".into(),
            is_error: false
        }));
        answer_of(pending).await?;
    }
    bridge.bridge.close().await;
    Ok(())
}

/// A `tools/call` sent again with the same JSON-RPC id, tool and arguments (a replay, on
/// another connection, while the first is parked or after it was answered) is refused
/// with a JSON-RPC error and never reaches DSH: DSH runs the tool once per call.
#[tokio::test]
async fn a_replayed_call_is_refused_and_never_parked_again() -> TestResult {
    let mut bridge = running().await?;
    let name = catalog::mcp_name("read.file");
    let first = bridge.spawn_call(7, &name, json!({"path": "notes.md"}));
    let parked = next_parked(&mut bridge).await?;
    let replay = bridge
        .rpc(call(7, &name, json!({"path": "notes.md"})))
        .await?;
    assert_eq!(replay["error"]["code"], -32600, "{replay}");
    assert!(replay.get("result").is_none(), "{replay}");
    assert!(bridge.calls.try_recv().is_err(), "the replay was parked");
    assert!(parked.resolve(ToolReply {
        text: "ok".into(),
        is_error: false
    }));
    assert_eq!(
        answer_of(first).await?["result"]["content"][0]["text"],
        "ok"
    );
    let after = bridge
        .rpc(call(7, &name, json!({"path": "notes.md"})))
        .await?;
    assert_eq!(after["error"]["code"], -32600, "{after}");
    assert!(
        bridge.calls.try_recv().is_err(),
        "the late replay was parked"
    );
    bridge.bridge.close().await;
    Ok(())
}

#[tokio::test]
async fn closing_settles_parked_calls() -> TestResult {
    let mut bridge = running().await?;
    let name = catalog::mcp_name("read.file");
    let pending = bridge.spawn_call(1, &name, json!({"path": "notes.md"}));
    let parked = next_parked(&mut bridge).await?;
    bridge.bridge.close().await;
    let answer = answer_of(pending).await?;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    drop(parked);
    Ok(())
}

#[tokio::test]
async fn closing_releases_the_port() -> TestResult {
    let bridge = running().await?;
    let url = bridge.url.clone();
    bridge.bridge.close().await;
    let after = reqwest::Client::new().post(url).send().await;
    assert!(
        after.is_err_and(|e| e.is_connect()),
        "the port still answers after close"
    );
    Ok(())
}

/// A bridge dropped without `close` (its turn panicked, say) still stops serving.
#[tokio::test]
async fn a_dropped_bridge_releases_its_port() -> TestResult {
    use tokio::io::AsyncReadExt;
    let bridge = running().await?;
    let authority = bridge
        .url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .ok_or("the bridge URL has no authority")?
        .to_owned();
    drop(bridge);
    // Every connection the port still takes is closed once serving stops (at once, or
    // when the listener goes); the first refused connection is the port released.
    tokio::time::timeout(BOUND, async {
        while let Ok(mut stream) = tokio::net::TcpStream::connect(&authority).await {
            let mut ignored = Vec::new();
            let _ended = stream.read_to_end(&mut ignored).await;
        }
    })
    .await
    .map_err(|_| "a dropped bridge kept its port open")?;
    Ok(())
}

#[tokio::test]
async fn a_turn_parks_at_most_64_calls_at_once() -> TestResult {
    let mut bridge = running_with_queue(MAX_PENDING_CALLS).await?;
    let name = catalog::mcp_name("read.file");
    let args = json!({"path": "notes.md"});
    let requests: Vec<_> = (0..MAX_PENDING_CALLS as u64)
        .map(|id| bridge.spawn_call(id, &name, args.clone()))
        .collect();
    let mut parked = Vec::new();
    for _ in 0..MAX_PENDING_CALLS {
        parked.push(next_parked(&mut bridge).await?);
    }
    // Every slot is taken (a slot is held from validation until the answer is sent).
    let refused = bridge.rpc(call(999, &name, args.clone())).await?;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("at most 64"), "{text}");
    assert!(
        bridge.calls.try_recv().is_err(),
        "the 65th call reached DSH"
    );
    // Answering one frees its slot once its request has been answered.
    let first = parked.pop().ok_or("nothing was parked")?;
    assert!(first.resolve(ToolReply {
        text: "done".into(),
        is_error: false
    }));
    let (answered, _, requests) =
        tokio::time::timeout(BOUND, futures::future::select_all(requests)).await?;
    assert!(answered??.contains("done"));
    let freed = bridge.spawn_call(1000, &name, args);
    let admitted = next_parked(&mut bridge).await?;
    admitted.resolve(ToolReply {
        text: "late".into(),
        is_error: false,
    });
    let answer = answer_of(freed).await?;
    assert_eq!(answer["result"]["content"][0]["text"], "late");
    drop(parked);
    bridge.bridge.close().await;
    for request in requests {
        tokio::time::timeout(BOUND, request).await???;
    }
    Ok(())
}

/// How a raw request frames its body.
#[derive(Debug, Clone, Copy)]
enum Framing {
    ContentLength,
    Chunked,
}

/// A `tools/call` of `read.file` exactly `size` bytes long, padded inside an argument the
/// schema refuses, so a body that gets through is answered 200 with an `isError` result
/// and never parks.
fn padded_call(size: usize) -> Result<String, Failure> {
    let name = catalog::mcp_name("read.file");
    let empty = call(1, &name, json!({"path": "notes.md", "pad": ""})).to_string();
    let padding = size
        .checked_sub(empty.len())
        .ok_or("the padded call cannot be that short")?;
    let body = call(
        1,
        &name,
        json!({"path": "notes.md", "pad": "x".repeat(padding)}),
    )
    .to_string();
    assert_eq!(body.len(), size);
    Ok(body)
}

/// POSTs `body` over a plain TCP connection, framed as asked, and returns the status.
async fn raw_post(bridge: &Running, body: &str, framing: Framing) -> Result<u16, Failure> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let authority = bridge
        .url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .ok_or("unexpected bridge url")?;
    let mut stream = tokio::net::TcpStream::connect(authority).await?;
    let framing_header = match framing {
        Framing::ContentLength => format!("content-length: {}", body.len()),
        Framing::Chunked => "transfer-encoding: chunked".to_owned(),
    };
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {authority}\r\nauthorization: {}\r\n\
         content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         mcp-protocol-version: 2025-06-18\r\n{framing_header}\r\nconnection: close\r\n\r\n",
        bridge.authorization
    );
    let mut wire = head.into_bytes();
    match framing {
        Framing::ContentLength => wire.extend_from_slice(body.as_bytes()),
        Framing::Chunked => {
            for chunk in body.as_bytes().chunks(64 * 1024) {
                wire.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                wire.extend_from_slice(chunk);
                wire.extend_from_slice(b"\r\n");
            }
            wire.extend_from_slice(b"0\r\n\r\n");
        }
    }
    let (mut reader, mut writer) = stream.split();
    // The server may answer (and stop reading) before the whole body is written.
    let write = async {
        let _unread = writer.write_all(&wire).await;
    };
    let mut response = Vec::new();
    let read = async {
        let mut buffer = [0u8; 1024];
        while !response.windows(2).any(|w| w == b"\r\n") {
            match reader.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => response.extend_from_slice(&buffer[..n]),
            }
        }
    };
    tokio::time::timeout(BOUND, futures::future::join(write, read)).await?;
    let status_line = String::from_utf8_lossy(&response);
    let status = status_line
        .split_whitespace()
        .nth(1)
        .ok_or_else(|| format!("no status line in {status_line:?}"))?;
    Ok(status.parse()?)
}

#[rstest::rstest]
#[case::content_length(Framing::ContentLength)]
#[case::chunked(Framing::Chunked)]
#[tokio::test]
async fn a_body_over_one_mebibyte_is_413_however_it_is_framed(
    #[case] framing: Framing,
) -> TestResult {
    const ONE_MIB: usize = 1_048_576;
    let bridge = running().await?;
    let at_the_limit = raw_post(&bridge, &padded_call(ONE_MIB)?, framing).await?;
    assert_eq!(at_the_limit, 200, "{framing:?}: a body of exactly 1 MiB");
    let over = raw_post(&bridge, &padded_call(ONE_MIB + 1)?, framing).await?;
    assert_eq!(over, 413, "{framing:?}: a body one byte over 1 MiB");
    bridge.bridge.close().await;
    Ok(())
}
