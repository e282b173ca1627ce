//! The process contract: `--version` on stderr, refused flags and scripts exit 2 (naming
//! the script's line and column), stdout stays silent until a request, stdin EOF and
//! SIGTERM exit 0 and are journaled.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use assert_cmd::cargo::cargo_bin_cmd;
use fake_antigravity::JournalEntry;
use predicates::prelude::*;

#[test]
fn version_prints_the_build_banner_on_stderr() {
    cargo_bin_cmd!("fake-antigravity")
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(
            "Build label: agy_acp_server_1.3.0",
        ));
}

#[test]
fn unknown_flags_exit_2() {
    cargo_bin_cmd!("fake-antigravity")
        .arg("--frobnicate")
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(
            "Unknown command line flag 'frobnicate'",
        ));
}

#[test]
fn a_bad_script_exits_2_naming_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.yaml");
    std::fs::write(
        &script,
        "auth: required\nturns:\n  - steps:\n      - txet: hi\n",
    )
    .unwrap();
    let expected = format!("{}:4:9:", script.display());
    cargo_bin_cmd!("fake-antigravity")
        .arg("--script")
        .arg(&script)
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(expected).and(predicate::str::contains("txet")));
}

#[test]
fn stdin_eof_exits_0_with_glog_lines_and_nothing_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    cargo_bin_cmd!("fake-antigravity")
        .args(["--uid=", "--nodebug", "--notices", "--alsologtostderr", "--journal"])
        .arg(dir.path())
        .env("GEMINI_HOME", dir.path())
        .write_stdin("")
        .assert()
        .success()
        .stdout(predicate::str::is_empty())
        .stderr(
            predicate::str::is_match(r"(?m)^I\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ main\.py:80\] Starting AGY ACP Server\.\.\.$")
                .unwrap(),
        );
    let journal = fake_antigravity::journal::read_dir(dir.path()).unwrap();
    let entries = &journal[0];
    let JournalEntry::Started { env, .. } = &entries[0] else {
        panic!("first entry {:?}", entries[0]);
    };
    assert_eq!(
        env.get("GEMINI_HOME"),
        Some(&dir.path().display().to_string())
    );
    assert_eq!(
        entries.last(),
        Some(&JournalEntry::Exited {
            reason: "stdin closed".into()
        })
    );
}

#[test]
fn sigterm_exits_cleanly_and_is_journaled() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-antigravity"))
        .arg("--journal")
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the fake to be serving: it answers a request.
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/list\",\"params\":{}}\n")
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert!(line.contains("\"sessions\":[]"), "{line}");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let (exit_tx, exit_rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || exit_tx.send(child.wait().unwrap()).unwrap());
    let exit = exit_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the fake ignored SIGTERM");
    waiter.join().unwrap();
    assert!(exit.success());
    drop(stdin);
    let journal = fake_antigravity::journal::read_dir(dir.path()).unwrap();
    assert_eq!(
        journal[0].last(),
        Some(&JournalEntry::Exited {
            reason: "signal".into()
        })
    );
}
