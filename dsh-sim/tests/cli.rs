#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The `dsh-sim` command line.

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::str::contains;

/// `text` with Windows path separators written as `/`, so one expectation holds on
/// every system (dsh-sim prints a Windows path natively, with backslashes).
fn slashes(text: &[u8]) -> String {
    String::from_utf8_lossy(text).replace('\\', "/")
}

#[test]
fn run_on_a_malformed_scenario_fails_and_names_file_line_and_column() {
    // Its own artefact root: every run records its failures there (last-failed.txt).
    let artifacts = tempfile::tempdir().unwrap();
    cargo_bin_cmd!("dsh-sim")
        .args(["run", "--artifacts"])
        .arg(artifacts.path())
        .arg("tests/fixtures/unknown_key.yaml")
        .assert()
        .code(1)
        .stdout(contains("FAIL  tests/fixtures/unknown_key.yaml"))
        .stdout(contains(
            "tests/fixtures/unknown_key.yaml:5:28: unknown field `permision`",
        ))
        .stdout(contains("\n0 passed, 1 failed\n"));
}

#[test]
fn run_on_a_missing_path_is_a_usage_error() {
    cargo_bin_cmd!("dsh-sim")
        .args(["run", "tests/fixtures/no-such-folder"])
        .assert()
        .code(2)
        .stderr(contains("no-such-folder"));
}

#[test]
fn run_needs_a_path() {
    cargo_bin_cmd!("dsh-sim").arg("run").assert().failure();
}

#[test]
fn the_server_option_needs_a_command() {
    cargo_bin_cmd!("dsh-sim")
        .args(["run", "--server", " ", "tests/fixtures/unknown_key.yaml"])
        .assert()
        .code(2)
        .stderr(contains("--server needs a command"));
}

#[test]
fn a_failed_scenario_leaves_its_transcript_journal_and_diagram() {
    let artifacts = tempfile::tempdir().unwrap();
    let folder = artifacts.path().join("tests/fixtures/failing_expectation");
    let output = cargo_bin_cmd!("dsh-sim")
        .args(["run", "--artifacts"])
        .arg(artifacts.path())
        .arg("tests/fixtures/failing_expectation.yaml")
        .assert()
        .code(1)
        .stdout(contains("final text: expected \"something else entirely\""))
        .stdout(contains("\n0 passed, 1 failed\n"))
        .get_output()
        .stdout
        .clone();
    let shown = slashes(&output);
    let artefacts = slashes(format!("artefacts: {}", folder.display()).as_bytes());
    assert!(
        shown.contains(&artefacts),
        "{artefacts}\nmissing from\n{shown}"
    );
    let read = |name: &str| std::fs::read_to_string(folder.join(name)).unwrap();
    assert!(read("reasons.txt").contains("something else entirely"));
    let transcript = read("transcript.txt");
    assert!(
        transcript.contains("\"type\":\"tool-call-delta\""),
        "{transcript}"
    );
    assert!(
        transcript.contains("history  user: tool_result "),
        "{transcript}"
    );
    let json: serde_json::Value = serde_json::from_str(&read("transcript.json")).unwrap();
    assert_eq!(json["runs"][0]["generations"].as_array().unwrap().len(), 2);
    let journal: Vec<_> = std::fs::read_dir(folder.join("journal"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    let with = |ext: &str| {
        journal
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .count()
    };
    assert_eq!(with("jsonl"), 1, "one server process, one journal file");
    assert_eq!(with("stderr"), 1, "and its stderr: {journal:?}");
    let diagram = read("sequence.md");
    for arrow in [
        "A->>S0: session/prompt",
        "S0->>B: tools/call",
        "B-->>S0: tools/call ok",
    ] {
        assert!(diagram.contains(arrow), "{arrow} missing from\n{diagram}");
    }
}

/// B05: the server's stderr is in a failed scenario's artefacts, next to its journal,
/// redacted as the journal redacts credentials: a token-like value the server printed
/// shows only as its shape and fingerprint.
#[test]
fn a_failed_scenario_leaves_the_servers_stderr_redacted() {
    const PLANTED: &str = "5ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2";
    let artifacts = tempfile::tempdir().unwrap();
    let folder = artifacts
        .path()
        .join("tests/fixtures/failing_with_a_secret_on_stderr/journal");
    cargo_bin_cmd!("dsh-sim")
        .args(["run", "--artifacts"])
        .arg(artifacts.path())
        .arg("tests/fixtures/failing_with_a_secret_on_stderr.yaml")
        .assert()
        .code(1);
    let stderr: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "stderr"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(stderr.len(), 1, "one server process, one stderr copy");
    let text = &stderr[0];
    assert!(text.contains("Starting AGY ACP Server..."), "{text}");
    assert!(
        text.contains("permission for <redacted len=69 text fp="),
        "{text}"
    );
    assert!(
        !text.contains(PLANTED),
        "the planted token reached the artefacts: {text}"
    );
}

/// B05 under `--server`: the relay keeps a copy of the server's stderr next to its
/// journal, so a failed scenario against any server command leaves that stderr too.
#[test]
fn a_failed_scenario_against_a_server_command_leaves_its_stderr() {
    let server = format!("{} fake-server", env!("CARGO_BIN_EXE_dsh-sim"));
    let artifacts = tempfile::tempdir().unwrap();
    cargo_bin_cmd!("dsh-sim")
        .args(["run", "--server", &server, "--artifacts"])
        .arg(artifacts.path())
        .arg("tests/fixtures/any_server_failing/wrong_text.yaml")
        .assert()
        .code(1);
    let folder = artifacts
        .path()
        .join("tests/fixtures/any_server_failing/wrong_text/journal");
    let stderr: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "stderr"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(stderr.len(), 1, "one relayed server, one stderr copy");
    assert!(
        stderr[0].contains("Starting AGY ACP Server..."),
        "{}",
        stderr[0]
    );
}

#[test]
fn any_acp_server_command_runs_the_scenarios_unchanged() {
    let server = format!("{} fake-server", env!("CARGO_BIN_EXE_dsh-sim"));
    let artifacts = tempfile::tempdir().unwrap();
    let output = cargo_bin_cmd!("dsh-sim")
        .args(["run", "--server", &server, "--artifacts"])
        .arg(artifacts.path())
        .arg("tests/fixtures/any_server")
        .assert()
        .code(0)
        .stdout(contains("\n1 passed, 0 failed\n"))
        .get_output()
        .stdout
        .clone();
    let shown = slashes(&output);
    assert!(
        shown.contains("PASS  tests/fixtures/any_server/echo.yaml"),
        "{shown}"
    );
    assert!(
        shown.contains("SKIP  tests/fixtures/any_server/fake_only.yaml"),
        "{shown}"
    );
}

/// A fixture of `tests/fixtures/server_scripts/` and the `--server` command that runs the
/// fake on it (`dsh-sim fake-server --script FILE`).
fn scripted_fake_server(fixture: &str) -> (std::path::PathBuf, String) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/server_scripts")
        .join(fixture);
    let server = format!(
        "{} fake-server --script {}",
        env!("CARGO_BIN_EXE_dsh-sim"),
        script.display()
    );
    (script, server)
}

/// Under `--server`, the process the journal names is the relay's child: the adapter's
/// group kill ends it with the relay, and its zombie waits for PID 1 to reap it. A server
/// that ignores SIGTERM and stdin EOF, torn down after `ACP_NATIVE_TOOL_REJECTED`, must be
/// judged gone (as gemini-cli 0.61 was not: "its last turn did not end cleanly").
#[test]
fn a_stubborn_command_server_torn_down_after_a_rejected_tool_is_no_leak() {
    let (script, server) = scripted_fake_server("stubborn_native.yaml");
    let artifacts = tempfile::tempdir().unwrap();
    cargo_bin_cmd!("dsh-sim")
        .args(["run", "--server", &server, "--allow-read"])
        .arg(&script)
        .arg("--artifacts")
        .arg(artifacts.path())
        .arg("tests/fixtures/any_server_slow_death")
        .assert()
        .code(0)
        .stdout(contains("\n1 passed, 0 failed\n"));
}

/// A `--server` command that exits during `initialize` fails the run at once with
/// `ACP_DISCONNECTED`: the relay between the adapter and the command closes the adapter's
/// pipe when its child exits (it used to keep it open, and the run read as a hang: "the
/// chat did not finish within" its whole bound).
#[test]
fn a_server_command_that_exits_at_initialize_fails_disconnected_not_as_a_hang() {
    let (_script, server) = scripted_fake_server("exits_at_initialize.yaml");
    let artifacts = tempfile::tempdir().unwrap();
    let output = cargo_bin_cmd!("dsh-sim")
        .args(["run", "--server", &server, "--artifacts"])
        .arg(artifacts.path())
        .arg("tests/fixtures/any_server/echo.yaml")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let shown = slashes(&output);
    assert!(shown.contains("ACP_DISCONNECTED"), "{shown}");
    assert!(!shown.contains("did not finish within"), "{shown}");
}

/// The same command run under `--confinement required`: where the kernel confines it, the
/// `ACP_DISCONNECTED` says the server ran confined, how, and which settings help (issue
/// 25 §4: nearly always a runtime outside the server's folder); where it cannot, nothing
/// started and the code says so. Seen failing with the plain "closed during initialize".
#[test]
fn a_confined_server_that_exits_at_initialize_is_told_to_be_confined() {
    let (_script, server) = scripted_fake_server("exits_at_initialize.yaml");
    let artifacts = tempfile::tempdir().unwrap();
    let output = cargo_bin_cmd!("dsh-sim")
        .args([
            "run",
            "--confinement",
            "required",
            "--server",
            &server,
            "--artifacts",
        ])
        .arg(artifacts.path())
        .arg("tests/fixtures/any_server/echo.yaml")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let shown = slashes(&output);
    if shown.contains("ACP_CONFINEMENT_UNAVAILABLE") || shown.contains("ACP_CONFINEMENT") {
        return;
    }
    assert!(shown.contains("ACP_DISCONNECTED"), "{shown}");
    for words in ["ran confined", "allowRead", "confinement to off"] {
        assert!(shown.contains(words), "{words}: {shown}");
    }
}

/// B08 against an unscripted server (as the nightly runs the real build): the runner
/// compares the server's own home before and after. The fake as a plain `--server`
/// command writes 1.3.0's conversation files into the `GEMINI_HOME` it is given; once the
/// adapter is disposed none may be left (seen failing, naming them, with the adapter's
/// removal at disposal deleted).
#[test]
fn a_server_command_run_leaves_nothing_in_the_servers_own_home() {
    let server = format!("{} fake-server", env!("CARGO_BIN_EXE_dsh-sim"));
    let home = tempfile::tempdir().unwrap();
    let artifacts = tempfile::tempdir().unwrap();
    cargo_bin_cmd!("dsh-sim")
        .env("GEMINI_HOME", home.path())
        .args(["run", "--server", &server, "--artifacts"])
        .arg(artifacts.path())
        .arg("../scenarios/conversations/two_messages_leave_nothing.yaml")
        .assert()
        .code(0)
        .stdout(contains("\n1 passed, 0 failed\n"));
    let conversations = home.path().join("antigravity-acp/conversations");
    assert!(
        conversations.is_dir(),
        "the fake wrote no conversation, so nothing was judged"
    );
    assert_eq!(std::fs::read_dir(&conversations).unwrap().count(), 0);
}
