#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The `dsh-sim` command line.

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::str::contains;

#[test]
fn run_on_a_malformed_scenario_fails_and_names_file_line_and_column() {
    cargo_bin_cmd!("dsh-sim")
        .args(["run", "tests/fixtures/unknown_key.yaml"])
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
