//! `dsh-sim ask`: one turn by hand, against the fake and against the fake run as any ACP
//! command, with a tool the model calls and a reply streamed in small pieces.
#![allow(clippy::unwrap_used)]

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::str::contains;

const SCRIPT: &str = r#"
turns:
  - steps:
      - thought: "reading"
      - call: { tool: read_file, args: { path: a.txt } }
      - stream: { text: "Read a.txt, café 👍🏽", code_points: 1 }
"#;

const TOOLS: &str = r#"[{"name": "read_file", "description": "Reads a file",
  "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]"#;

fn files() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.yaml");
    let tools = dir.path().join("tools.json");
    std::fs::write(&script, SCRIPT).unwrap();
    std::fs::write(&tools, TOOLS).unwrap();
    let script = script.display().to_string();
    let tools = tools.display().to_string();
    (dir, script, tools)
}

#[test]
fn ask_against_the_fake_streams_the_turn_and_answers_tool_calls() {
    let (_dir, script, tools) = files();
    cargo_bin_cmd!("dsh-sim")
        .args([
            "ask",
            "please read a.txt",
            "--script",
            &script,
            "--tools",
            &tools,
        ])
        .assert()
        .code(0)
        .stdout(contains("Read a.txt, café 👍🏽"))
        .stderr(contains(r#"[tool call] read_file {"path":"a.txt"}"#))
        .stderr(contains("[finish] Stop"));
}

#[test]
fn ask_against_any_acp_command() {
    let (_dir, script, tools) = files();
    let server = format!(
        "{} fake-server --script {script}",
        env!("CARGO_BIN_EXE_dsh-sim")
    );
    // The command's script lies outside its own directory: a confined server is let read
    // it with --allow-read (without it the fake cannot read its script).
    cargo_bin_cmd!("dsh-sim")
        .args(["ask", "read it", "--server", &server, "--tools", &tools])
        .args(["--model", "gemini-3.8-flash-low", "--allow-read", &script])
        .assert()
        .code(0)
        .stdout(contains("Read a.txt, café 👍🏽"))
        .stderr(contains("[finish] Stop"));
}

#[test]
fn ask_reports_a_failed_generation_with_exit_code_1() {
    cargo_bin_cmd!("dsh-sim")
        .args(["ask", "hi", "--server", "/nonexistent/acp-server"])
        .assert()
        .code(1)
        .stderr(contains("the generation failed"));
}
