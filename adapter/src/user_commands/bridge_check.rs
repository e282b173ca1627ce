//! The bridge check of `doctor`: the very MCP bridge a tool turn starts
//! ([`StandaloneBridge`]), bound on loopback with one tool, one `tools/call` round trip
//! over real HTTP with its bearer token, then closed. It proves the bridge can bind, guard
//! and answer here (a firewall or a proxy setting that breaks loopback shows up), without
//! a server.

use std::time::Duration;

use serde_json::{Value, json};

use crate::contract::ToolSchema;
use crate::{BridgeAnswer, StandaloneBridge};

use super::report::{Check, CheckStatus};

/// How long the round trip may take.
const BOUND: Duration = Duration::from_secs(10);

/// The tool the check exports.
const TOOL: &str = "doctor.echo";

/// One round trip through a fresh bridge.
pub(crate) async fn bridge_check() -> Check {
    match tokio::time::timeout(BOUND, round_trip()).await {
        Ok(Ok(url)) => Check::new(
            "bridge",
            CheckStatus::Ok,
            "loopback round trip",
            format!(
                "the MCP bridge bound {url}, answered one tools/call with its token, and closed"
            ),
        ),
        Ok(Err(why)) => failed(why),
        Err(_) => failed(format!("no answer within {} s", BOUND.as_secs())),
    }
}

fn failed(why: String) -> Check {
    Check::new(
        "bridge",
        CheckStatus::Fail,
        "no round trip",
        format!("the MCP bridge's loopback round trip failed: {why}"),
    )
    .fix("allow connections to 127.0.0.1 (a firewall or sandbox may refuse loopback)")
}

/// Starts a bridge whose tool echoes, calls it once, checks the answer, closes it; its
/// URL.
async fn round_trip() -> Result<String, String> {
    round_trip_answering(|_tool, arguments: &Value| BridgeAnswer {
        text: arguments["text"].as_str().unwrap_or_default().to_owned(),
        is_error: false,
    })
    .await
}

/// [`round_trip`] with the tool answering as `answer` does (a test's bridge that does not
/// echo).
async fn round_trip_answering<F>(answer: F) -> Result<String, String>
where
    F: Fn(&str, &Value) -> BridgeAnswer + Send + 'static,
{
    let tools = [ToolSchema {
        name: TOOL.into(),
        description: "Echoes its text (antigravity-acp-dsh doctor)".into(),
        parameters: json!({"type": "object", "properties": {"text": {"type": "string"}},
                           "required": ["text"], "additionalProperties": false}),
    }];
    let bridge = StandaloneBridge::start(&tools, answer)
        .await
        .map_err(|e| format!("it did not start ({}: {})", e.code.as_str(), e.message))?;
    let called = call(&bridge).await;
    let url = bridge.url().to_owned();
    bridge.close().await;
    called.map(|()| url)
}

async fn call(bridge: &StandaloneBridge) -> Result<(), String> {
    let name = bridge
        .tools()
        .first()
        .map(|tool| tool.mcp_name.clone())
        .ok_or("it exported no tool")?;
    call_tool(bridge.url(), bridge.token(), &name).await
}

/// One `tools/call` of `name` with a fresh nonce at `url`, with `token`; `Ok` when the
/// answer is the nonce echoed.
async fn call_tool(url: &str, token: &str, name: &str) -> Result<(), String> {
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": name, "arguments": {"text": nonce}}});
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|_| "no HTTP client could be made".to_owned())?;
    let response = client
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| format!("the request failed ({})", request_failure(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("the bridge answered HTTP {}", status.as_u16()));
    }
    let text = response
        .text()
        .await
        .map_err(|_| "the answer could not be read".to_owned())?;
    let answer: Value =
        serde_json::from_str(&text).map_err(|_| "the answer is not JSON".to_owned())?;
    match answer
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
    {
        Some(echoed) if echoed == nonce => Ok(()),
        _ => Err("the answer is not the tool's".to_owned()),
    }
}

/// What kind of failure a request met (never its text, which may name the URL's token).
fn request_failure(error: &reqwest::Error) -> &'static str {
    if error.is_connect() {
        "could not connect"
    } else if error.is_timeout() {
        "timed out"
    } else {
        "an HTTP error"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_bridge_answers_its_round_trip() {
        let check = bridge_check().await;
        assert_eq!(check.status, CheckStatus::Ok, "{check:?}");
        assert!(
            check.detail.contains("http://127.0.0.1:"),
            "{}",
            check.detail
        );
    }

    /// A tool that answers something other than its nonce fails the round trip.
    #[tokio::test]
    async fn an_answer_that_is_not_the_echo_fails() {
        let answered = round_trip_answering(|_tool, _arguments: &Value| BridgeAnswer {
            text: "something else".into(),
            is_error: false,
        })
        .await;
        assert_eq!(answered, Err("the answer is not the tool's".to_owned()));
    }

    /// A bridge that is gone: the request fails, and says how without its text.
    #[tokio::test]
    async fn a_closed_bridge_fails_the_call_saying_it_could_not_connect() -> crate::TestResult {
        let tools = [ToolSchema {
            name: TOOL.into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        }];
        let bridge = StandaloneBridge::start(&tools, |_tool, _arguments: &Value| BridgeAnswer {
            text: String::new(),
            is_error: false,
        })
        .await
        .map_err(|e| e.message)?;
        let url = bridge.url().to_owned();
        let token = bridge.token().to_owned();
        let name = bridge.tools()[0].mcp_name.clone();
        bridge.close().await;
        assert_eq!(
            call_tool(&url, &token, &name).await,
            Err("the request failed (could not connect)".to_owned())
        );
        Ok(())
    }
}
