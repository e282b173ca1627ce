#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `dsh-sim bridge` over real HTTP: the announcement line, a listed tool under its hashed
//! name, an echoed and a denied call, an invalid call answered by the bridge, and the
//! port closed once stdin closes.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const BOUND: Duration = Duration::from_secs(20);

struct Session {
    child: Child,
    url: String,
    token: String,
    tools: Vec<Value>,
    client: reqwest::Client,
}

async fn start(result: &str) -> Session {
    let folder = tempfile::tempdir().unwrap();
    let tools = folder.path().join("tools.json");
    std::fs::write(
        &tools,
        json!([
            {"name": "read.file", "description": "Reads a file",
             "input_schema": {"type": "object", "properties": {"path": {"type": "string", "minLength": 2}}, "required": ["path"]}},
            {"name": "list", "schema": {"type": "object"}}
        ])
        .to_string(),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-sim"))
        .args(["bridge", "--tools"])
        .arg(&tools)
        .args(["--result", result])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(BOUND, lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .expect("one announcement line");
    let announced: Value = serde_json::from_str(&line).unwrap();
    Session {
        child,
        url: announced["url"].as_str().unwrap().to_owned(),
        token: announced["token"].as_str().unwrap().to_owned(),
        tools: announced["tools"].as_array().unwrap().clone(),
        client: reqwest::Client::new(),
    }
}

impl Session {
    async fn rpc(&self, body: Value) -> Value {
        let response = self
            .client
            .post(&self.url)
            .header("authorization", format!("Bearer {}", self.token))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        serde_json::from_str(&response.text().await.unwrap()).unwrap()
    }

    async fn call(&self, name: &str, arguments: Value) -> Value {
        self.rpc(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": name, "arguments": arguments}}))
            .await["result"]
            .clone()
    }

    fn mcp_name(&self, tool: &str) -> String {
        let entry = self.tools.iter().find(|t| t["name"] == tool).unwrap();
        entry["mcp_name"].as_str().unwrap().to_owned()
    }

    /// Closes stdin and checks the process exits cleanly and the port refuses.
    async fn close(mut self) {
        drop(self.child.stdin.take());
        let status = tokio::time::timeout(BOUND, self.child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success(), "{status}");
        let after = reqwest::Client::new().post(&self.url).send().await;
        assert!(
            after.is_err_and(|e| e.is_connect()),
            "the bridge still answers after stdin closed"
        );
    }
}

#[tokio::test]
async fn echo_answers_each_valid_call_with_its_arguments_and_stdin_closes_it() {
    let session = start("echo").await;
    assert!(
        session.url.starts_with("http://127.0.0.1:"),
        "{}",
        session.url
    );
    assert!(session.url.ends_with("/mcp"), "{}", session.url);
    assert_eq!(session.token.len(), 64);
    assert!(session.token.bytes().all(|b| b.is_ascii_hexdigit()));
    let read = session.mcp_name("read.file");
    assert!(read.starts_with("read_file_"), "{read}");

    let listed = session
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let titles: Vec<&Value> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["title"])
        .collect();
    assert_eq!(titles, [&json!("read.file"), &json!("list")]);

    let echoed = session.call(&read, json!({"path": "notes.md"})).await;
    assert_eq!(echoed["isError"], false, "{echoed}");
    let text = echoed["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({"path": "notes.md"})
    );

    let invalid = session.call(&read, json!({"path": "x"})).await;
    assert_eq!(invalid["isError"], true, "{invalid}");
    let why = invalid["content"][0]["text"].as_str().unwrap();
    assert!(why.contains("invalid arguments for read.file"), "{why}");
    session.close().await;
}

#[tokio::test]
async fn deny_answers_each_valid_call_as_dsh_denies_it() {
    let session = start("deny").await;
    let list = session.mcp_name("list");
    let denied = session.call(&list, json!({})).await;
    assert_eq!(denied["isError"], true, "{denied}");
    assert_eq!(denied["content"][0]["text"], "permission denied by DSH");
    session.close().await;
}

#[tokio::test]
async fn a_tool_the_adapter_cannot_export_is_refused() {
    let folder = tempfile::tempdir().unwrap();
    let tools = folder.path().join("tools.json");
    std::fs::write(
        &tools,
        r#"[{"name": "t", "input_schema": {"type": "string"}}]"#,
    )
    .unwrap();
    let output = bridge_with(&tools).await;
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("ACP_TOOL_CATALOG_INVALID"), "{stderr}");
    std::fs::write(&tools, r#"[{"nam": "t"}]"#).unwrap();
    let output = bridge_with(&tools).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("tools.json:1:"), "{stderr}");
    assert!(stderr.contains("unknown field `nam`"), "{stderr}");
}

/// Runs `dsh-sim bridge --tools FILE` with no stdin, to its end.
async fn bridge_with(tools: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_dsh-sim"))
        .args(["bridge", "--tools"])
        .arg(tools)
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap()
}
