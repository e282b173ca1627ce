//! `dsh-sim run --agent` on bad input: an agent that never calls the model, an agent that
//! exits at once, and an agent whose request the script has no turn for each fail the
//! scenario within its bound, and the failure says which. The first two need no real agent
//! (the ACP fake, which never calls a model, and `false`); the third runs the pinned
//! Gemini CLI (`npm ci --prefix ci/real-agents`), skipped without it except under CI.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

fn run_agent(agent: &str, server: Option<&str>, fixture: &str) -> (bool, String) {
    let artifacts = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_dsh-sim"));
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    command.args(["run", "--agent", agent, "--timeout", "30", "--artifacts"]);
    command.arg(artifacts.path());
    if let Some(server) = server {
        command.args(["--server", server]);
    }
    command.arg(format!("tests/fixtures/real_agent/{fixture}"));
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    (output.status.success(), stdout)
}

#[test]
fn an_agent_that_never_calls_the_model_fails_saying_so() {
    let fake = format!("{} fake-server", env!("CARGO_BIN_EXE_dsh-sim"));
    let (passed, stdout) = run_agent("antigravity", Some(&fake), "scripted_text.yaml");
    assert!(!passed, "{stdout}");
    assert!(
        stdout.contains("the agent never called the model API"),
        "{stdout}"
    );
}

#[test]
fn an_agent_that_exits_at_once_fails_saying_so() {
    let (passed, stdout) = run_agent("antigravity", Some("false"), "scripted_text.yaml");
    assert!(!passed, "{stdout}");
    assert!(
        stdout.contains("ACP_DISCONNECTED: the server connection closed during initialize"),
        "the failure names the agent's exit: {stdout}"
    );
}

#[test]
fn a_request_the_script_has_no_turn_for_fails_naming_where() {
    let gemini = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ci/real-agents/node_modules/@google/gemini-cli/bundle/gemini.js");
    if !gemini.is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs Gemini CLI (ci/test.sh): {} is missing",
            gemini.display()
        );
        eprintln!("skipped: no Gemini CLI (npm ci --prefix ci/real-agents)");
        return;
    }
    let (passed, stdout) = run_agent("gemini-cli", None, "no_turn_left.yaml");
    assert!(!passed, "{stdout}");
    assert!(
        stdout.contains("the model API got a request its script does not cover"),
        "{stdout}"
    );
    assert!(stdout.contains("turn none, step none"), "{stdout}");
}
