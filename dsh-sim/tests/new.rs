#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `dsh-sim new AREA/NAME [--from EXISTING]`, in a temporary scenarios folder: the
//! skeleton lints clean and passes as it is, a copy keeps its body with `covers: []`,
//! nothing is overwritten, and bad names are refused.

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::str::contains;

const SCHEMA_LINE: &str = "# yaml-language-server: $schema=../scenario.schema.json\n";

/// A temporary repository with a `scenarios/` folder holding the real schema.
fn repository() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let scenarios = root.path().join("scenarios");
    std::fs::create_dir_all(&scenarios).unwrap();
    std::fs::copy(
        Path::new("../scenarios/scenario.schema.json"),
        scenarios.join("scenario.schema.json"),
    )
    .unwrap();
    (root, scenarios)
}

/// `text` with Windows path separators written as `/`, so one expectation holds on
/// every system (dsh-sim prints a Windows path natively, with backslashes).
fn slashes(text: &[u8]) -> String {
    String::from_utf8_lossy(text).replace('\\', "/")
}

fn dsh_sim(cwd: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    cargo_bin_cmd!("dsh-sim")
        .current_dir(cwd)
        .args(args)
        .assert()
}

#[test]
fn the_skeleton_lints_clean_runs_green_and_is_never_overwritten() {
    let (root, scenarios) = repository();
    let cwd = root.path();
    let created = slashes(
        &dsh_sim(cwd, &["new", "tool_calls/my_bug"])
            .code(0)
            .get_output()
            .stdout,
    );
    assert!(
        created.contains("created scenarios/tool_calls/my_bug.yaml"),
        "{created}"
    );
    assert!(
        created.contains("cargo run -p dsh-sim -- run scenarios/tool_calls/my_bug.yaml"),
        "{created}"
    );
    let file = scenarios.join("tool_calls/my_bug.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with(SCHEMA_LINE), "{text}");
    assert!(text.contains("\ncovers: []\n"), "{text}");
    dsh_sim(cwd, &["lint", "scenarios"])
        .code(0)
        .stdout(contains("1 files, 0 problems"));
    let ran = dsh_sim(
        cwd,
        &[
            "run",
            "--artifacts",
            "artefacts",
            "scenarios/tool_calls/my_bug.yaml",
        ],
    )
    .code(0)
    .get_output()
    .stdout
    .clone();
    let ran = slashes(&ran);
    assert!(
        ran.contains("PASS  scenarios/tool_calls/my_bug.yaml"),
        "{ran}"
    );

    std::fs::write(&file, "edited by hand\n").unwrap();
    dsh_sim(cwd, &["new", "tool_calls/my_bug"])
        .code(2)
        .stderr(contains("exists already"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "edited by hand\n");
}

#[test]
fn a_copy_keeps_the_scenario_with_covers_reset() {
    let (root, scenarios) = repository();
    let original = std::fs::canonicalize("../scenarios/tool_calls/denial.yaml").unwrap();
    cargo_bin_cmd!("dsh-sim")
        .current_dir(root.path())
        .args(["new", "permissions/denied_again", "--from"])
        .arg(&original)
        .assert()
        .code(0);
    let copy = std::fs::read_to_string(scenarios.join("permissions/denied_again.yaml")).unwrap();
    let source = std::fs::read_to_string(&original).unwrap();
    assert!(copy.starts_with(SCHEMA_LINE), "{copy}");
    assert_eq!(copy.matches("yaml-language-server").count(), 1, "{copy}");
    assert!(copy.contains("\ncovers: []\n"), "{copy}");
    let name = source.lines().find(|l| l.starts_with("name:")).unwrap();
    assert!(copy.contains(name), "{copy}");
    dsh_sim(root.path(), &["lint", "scenarios"]).code(0);
}

#[test]
fn bad_names_and_a_missing_folder_are_refused() {
    let (root, _) = repository();
    for bad in [
        "tool_calls",
        "../escape/x",
        "Tool_Calls/x",
        "a/b/c",
        "a/x.yaml",
    ] {
        dsh_sim(root.path(), &["new", bad])
            .code(2)
            .stderr(contains("is not AREA/NAME"));
    }
    dsh_sim(root.path(), &["new", "a/b", "--root", "elsewhere"])
        .code(2)
        .stderr(contains("elsewhere: no scenarios folder here"));
    assert!(!root.path().join("scenarios/a").exists());
}
