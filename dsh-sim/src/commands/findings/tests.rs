//! The findings' extraction on hand-made journals, and the walk over an artefacts folder.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use super::*;

fn model(lines: &[Value]) -> Vec<ModelEntry> {
    lines
        .iter()
        .map(|l| serde_json::from_value(l.clone()).unwrap())
        .collect()
}

fn acp(lines: &[Value]) -> Vec<Vec<AcpEntry>> {
    vec![
        lines
            .iter()
            .map(|l| serde_json::from_value(l.clone()).unwrap())
            .collect(),
    ]
}

fn request(seq: u64, model: &str, contents: Value, tools: &[&str]) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|name| json!({"name": name, "description": "", "parameters": {}}))
        .collect();
    json!({
        "kind": "request", "seq": seq, "method": "stream", "model": model,
        "path": format!("/v1beta/models/{model}:streamGenerateContent"),
        "api_key": {"header": "x-goog-api-key", "chars": 26},
        "contents": contents, "system_instruction": null, "tools": tools,
        "generation_config": {}
    })
}

const BRIDGE: &str = "mcp_dsh_read_file_0123456789ab";

fn user(text: &str) -> Value {
    json!({"role": "user", "parts": [{"kind": "text", "text": text}]})
}

fn call() -> Value {
    json!({"role": "model", "parts": [
        {"kind": "thought", "text": "hm"},
        {"kind": "function_call", "name": BRIDGE, "args": {"path": "notes.txt"}}]})
}

fn result() -> Value {
    json!({"role": "user", "parts": [
        {"kind": "function_response", "name": BRIDGE, "response": {"output": "buy milk"}}]})
}

/// A tool round: two main requests, a utility request in between, the first answered with
/// a call to the bridge tool.
fn tool_round() -> ScenarioJournals {
    let tools = [BRIDGE, "read_file", "glob"];
    ScenarioJournals {
        name: "tool_calls/round_trip".to_owned(),
        model_api: model(&[
            request(
                1,
                "gemini-2.5-pro",
                json!([user("Please read notes.txt")]),
                &tools,
            ),
            json!({"kind": "response", "seq": 1, "turn": 0, "segment": 0, "steps": [],
                   "function_calls": [BRIDGE]}),
            request(2, "gemini-2.5-flash-lite", json!([user("classify")]), &[]),
            json!({"kind": "utility", "seq": 2, "model": "gemini-2.5-flash-lite"}),
            request(
                3,
                "gemini-2.5-pro",
                json!([user("Please read notes.txt"), call(), result()]),
                &tools,
            ),
        ]),
        acp: acp(&[
            json!({"kind": "acp_in", "frame": {"jsonrpc": "2.0", "id": 1, "method": "session/new",
                   "params": {"cwd": "/tmp/x", "mcpServers": [{"name": "dsh", "type": "http"}]}}}),
            json!({"kind": "acp_out", "frame": {"jsonrpc": "2.0", "id": 0,
                   "method": "session/request_permission", "params": {
                       "sessionId": "s",
                       "toolCall": {"toolCallId": "mcp_dsh_read_file_0123456789ab-1765120000123",
                                    "title": "read_file_0123456789ab (dsh MCP Server)"},
                       "options": [
                           {"optionId": "proceed_always", "kind": "allow_always", "name": "Always"},
                           {"optionId": "proceed_once", "kind": "allow_once", "name": "Once"},
                           {"optionId": "cancel", "kind": "reject_once", "name": "No"}]}}}),
        ]),
    }
}

fn text_turn(name: &str) -> ScenarioJournals {
    ScenarioJournals {
        name: name.to_owned(),
        model_api: model(&[request(1, "gemini-2.5-pro", json!([user("hi")]), &["glob"])]),
        acp: Vec::new(),
    }
}

#[test]
fn a_tool_round_shows_naming_natives_permission_and_tool_result() {
    let lines = findings(&[tool_round(), text_turn("streaming/text")]);
    let expected = [
        "finding: native-tools: glob, read_file (2 scenarios)",
        "finding: mcp-tool-naming: mcp_dsh_<tool>_<hash> (1 scenario)",
        "finding: permission-asked: yes, for a bridge tool the model called (1 scenario)",
        "finding: permission-options: bridge tool: proceed_always/allow_always, \
         proceed_once/allow_once, cancel/reject_once (1 scenario)",
        "finding: permission-title: bridge tool: read_file_<hex12> (dsh MCP Server) (1 scenario)",
        "finding: permission-tool-call-id: bridge tool: mcp_dsh_read_file_<hex12>-<n> (1 scenario)",
        "finding: permission-meta-mcp: bridge tool: _meta.mcp absent (1 scenario)",
        "finding: tool-result: role user with function_response; before it \
         model[thought, function_call]; after it nothing (1 scenario)",
        "finding: retry: none (no two main requests with identical contents) (2 scenarios)",
        "finding: model: gemini-2.5-flash-lite for utility requests (1 scenario)",
        "finding: model: gemini-2.5-pro for main requests (2 scenarios)",
        "finding: api-key-shape: header x-goog-api-key, 26 characters (2 scenarios)",
    ];
    assert_eq!(lines, expected);
}

#[test]
fn an_identical_main_request_is_a_retry() {
    let contents = json!([user("hi")]);
    let scenario = ScenarioJournals {
        name: "retry".to_owned(),
        model_api: model(&[
            request(1, "m", contents.clone(), &[]),
            json!({"kind": "unscripted", "seq": 1, "reason": "boom"}),
            request(2, "m", contents, &[]),
        ]),
        acp: Vec::new(),
    };
    let lines = findings(&[scenario]);
    assert!(
        lines.contains(
            &"finding: retry: a main request sent again with identical contents (1 scenario)"
                .to_owned()
        )
    );
    assert!(lines.contains(&"finding: native-tools: none (1 scenario)".to_owned()));
}

#[test]
fn a_bridge_call_without_a_permission_request_says_so() {
    let mut scenario = tool_round();
    let AcpEntry::AcpIn { frame } = scenario.acp[0][0].clone() else {
        panic!("the first entry is session/new");
    };
    scenario.acp = vec![vec![AcpEntry::AcpIn { frame }]];
    let lines = findings(&[scenario]);
    assert!(
        lines.contains(
            &"finding: permission-asked: no, not for a bridge tool the model called (1 scenario)"
                .to_owned()
        )
    );
    assert!(!lines.iter().any(|l| l.contains("permission-options")));
}

#[test]
fn bridge_names_end_in_twelve_lowercase_hex_digits() {
    assert!(is_bridge_name("read_file_0123456789ab"));
    assert!(is_bridge_name("mcp_dsh_x_abcdefabcdef"));
    assert!(!is_bridge_name("read_file_0123456789AB"));
    assert!(!is_bridge_name("read_file_0123456789a"));
    assert!(!is_bridge_name("_0123456789ab"));
    assert!(!is_bridge_name("read_file"));
    assert!(is_bridge_name("réad_0123456789ab"));
    assert!(!is_bridge_name("read_0123456789é"));
}

#[test]
fn the_prefix_is_what_comes_up_to_the_mcp_server_name() {
    let servers: BTreeSet<String> = ["dsh".to_owned()].into();
    assert_eq!(
        bridge_prefix("mcp_dsh_echo_0123456789ab", &servers),
        "mcp_dsh_"
    );
    assert_eq!(bridge_prefix("dsh__echo_0123456789ab", &servers), "dsh__");
    assert_eq!(bridge_prefix("echo_0123456789ab", &servers), "");
    assert_eq!(bridge_prefix("xdsh_echo_0123456789ab", &servers), "");
}

#[test]
fn shapes_hide_hashes_and_numbers() {
    assert_eq!(shape("call_0123456789abcdef-17"), "call_<hex16>-<n>");
    assert_eq!(shape("Read notes.txt"), "Read notes.txt");
    assert_eq!(shape("deadbeef"), "deadbeef");
    assert_eq!(shape(&"a".repeat(100)).chars().count(), 81);
}

#[test]
fn the_walk_reads_model_api_and_client_journals_and_reports_bad_ones() {
    let root = tempfile::tempdir().unwrap();
    let folder = root.path().join("tool_calls/round_trip");
    std::fs::create_dir_all(folder.join("journal")).unwrap();
    let scenario = tool_round();
    let model_lines: Vec<String> = scenario
        .model_api
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
    std::fs::write(folder.join("model-api.jsonl"), model_lines.join("\n")).unwrap();
    let acp_lines: Vec<String> = scenario.acp[0]
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
    std::fs::write(folder.join("journal/1.jsonl"), acp_lines.join("\n")).unwrap();
    std::fs::write(folder.join("journal/1.stderr"), "noise").unwrap();
    let broken = root.path().join("streaming/broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("model-api.jsonl"), "not json\n").unwrap();
    let (scenarios, problems) = collect(root.path());
    assert_eq!(scenarios.len(), 1);
    assert_eq!(scenarios[0].name, "tool_calls/round_trip");
    assert_eq!(scenarios[0].model_api.len(), 5);
    assert_eq!(scenarios[0].acp[0].len(), 2);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("broken"));
}
