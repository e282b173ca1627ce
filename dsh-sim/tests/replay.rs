//! B01: a scenario run under `--server` is judged on the runner's client-side journal,
//! and when it fails it leaves `replay.yaml`, whose fake script replays the server's
//! frames, so that the failure reproduces against the fake.
#![allow(clippy::unwrap_used)]

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::str::contains;

#[test]
fn a_failure_under_server_leaves_a_replay_that_fails_the_same_way_against_the_fake() {
    let server = format!("{} fake-server", env!("CARGO_BIN_EXE_dsh-sim"));
    let artifacts = tempfile::tempdir().unwrap();
    let failure = r#"final text: expected "the magic words", got "[DSH adapter instructions]"#;
    cargo_bin_cmd!("dsh-sim")
        .args(["run", "--server", &server, "--artifacts"])
        .arg(artifacts.path())
        .arg("tests/fixtures/any_server_failing/wrong_text.yaml")
        .assert()
        .code(1)
        .stdout(contains(failure))
        .stdout(contains(
            "replay scenario (the server's frames as a fake script)",
        ));
    let replay = artifacts
        .path()
        .join("tests/fixtures/any_server_failing/wrong_text/replay.yaml");
    let text = std::fs::read_to_string(&replay).unwrap();
    assert!(text.contains("fake_only: replays"), "{text}");
    let replay_artifacts = tempfile::tempdir().unwrap();
    cargo_bin_cmd!("dsh-sim")
        .args(["run", "--artifacts"])
        .arg(replay_artifacts.path())
        .arg(&replay)
        .assert()
        .code(1)
        .stdout(contains(failure));
}

#[test]
fn wire_expectations_are_judged_on_the_client_side_journal_under_server() {
    let server = format!("{} fake-server", env!("CARGO_BIN_EXE_dsh-sim"));
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("two_prompts.yaml");
    std::fs::write(
        &scenario,
        "name: wrong prompt count\ncovers: []\ndsh:\n  chat:\n    - user: hi\nexpect:\n  \
         finish: stop\n  wire:\n    prompts: 2\n    acp_methods:\n      - [initialize, session/new, session/prompt]\n",
    )
    .unwrap();
    cargo_bin_cmd!("dsh-sim")
        .args(["run", "--server", &server, "--artifacts"])
        .arg(dir.path().join("artifacts"))
        .arg(&scenario)
        .assert()
        .code(1)
        .stdout(contains("session/prompt requests: expected 2, observed 1"));
}
