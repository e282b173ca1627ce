#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `dsh-sim run` options: `known_failure` (XFAIL while failing, XPASS fails the run),
//! `--filter`, `--only-failed` and `--diagram`, on scenarios written to a temporary folder.

use std::path::{Path, PathBuf};

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;

/// A scenario whose fake says "hello"; it passes when `expected` is "hello".
fn scenario(name: &str, expected: &str, known_failure: Option<&str>) -> String {
    let marker = known_failure
        .map(|reason| format!("known_failure: \"{reason}\"\n"))
        .unwrap_or_default();
    format!(
        "name: {name}\ncovers: []\n{marker}fake:\n  turns:\n    - steps:\n        - text: \"hello\"\n\
         dsh:\n  chat:\n    - user: \"Say hello\"\nexpect:\n  final_text: \"{expected}\"\n"
    )
}

struct Folder {
    dir: tempfile::TempDir,
}

impl Folder {
    fn new(files: &[(&str, String)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        Self { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `dsh-sim run ARGS...` with artefacts inside the folder.
    fn run(&self, args: &[&str]) -> assert_cmd::assert::Assert {
        cargo_bin_cmd!("dsh-sim")
            .current_dir(self.dir.path())
            .args(["run", "--artifacts", "artefacts"])
            .args(args)
            .assert()
    }
}

#[test]
fn a_known_failure_that_fails_is_xfail_and_the_run_succeeds() {
    let folder = Folder::new(&[(
        "bug.yaml",
        scenario("a bug", "goodbye", Some("says hello; tracked in issue 99")),
    )]);
    folder
        .run(&["bug.yaml"])
        .code(0)
        .stdout(contains("XFAIL  bug.yaml  a bug"))
        .stdout(contains("known failure: says hello; tracked in issue 99"))
        .stdout(contains("final text: expected \"goodbye\""))
        .stdout(contains("(1 known failures, XFAIL)"))
        .stdout(contains("\n0 passed, 0 failed\n"));
}

#[test]
fn a_known_failure_that_passes_is_xpass_and_fails_the_run() {
    let folder = Folder::new(&[(
        "fixed.yaml",
        scenario("a fixed bug", "hello", Some("tracked in issue 99")),
    )]);
    folder
        .run(&["fixed.yaml"])
        .code(1)
        .stdout(contains("FAIL  fixed.yaml"))
        .stdout(contains("XPASS"))
        .stdout(contains("remove the marker"))
        .stdout(contains("\n0 passed, 1 failed\n"));
}

#[test]
fn an_empty_known_failure_reason_is_refused_with_its_location() {
    let folder = Folder::new(&[("empty.yaml", scenario("x", "hello", Some(" ")))]);
    folder
        .run(&["empty.yaml"])
        .code(1)
        .stdout(contains("empty.yaml:3:16: `known_failure` needs a reason"));
}

#[test]
fn filter_selects_by_path_or_name() {
    let folder = Folder::new(&[
        ("first.yaml", scenario("says hello", "hello", None)),
        ("second.yaml", scenario("greets", "hello", None)),
    ]);
    folder
        .run(&["--filter", "SECOND", "."])
        .code(0)
        .stdout(contains("second.yaml").and(contains("first.yaml").not()))
        .stdout(contains("\n1 passed, 0 failed\n"));
    folder
        .run(&["--filter", "says hel", "."])
        .code(0)
        .stdout(contains("first.yaml").and(contains("second.yaml").not()));
    folder
        .run(&["--filter", "nothing like it", "."])
        .code(2)
        .stderr(contains("no scenario's path or name contains"));
}

#[test]
fn only_failed_reruns_what_failed_last_time() {
    let folder = Folder::new(&[
        ("good.yaml", scenario("good", "hello", None)),
        ("bad.yaml", scenario("bad", "goodbye", None)),
    ]);
    folder
        .run(&["--only-failed", "."])
        .code(0)
        .stdout(contains("nothing to run"));
    folder
        .run(&["."])
        .code(1)
        .stdout(contains("\n1 passed, 1 failed\n"));
    let record = std::fs::read_to_string(folder.path("artefacts/last-failed.txt")).unwrap();
    assert_eq!(record.trim().replace('\\', "/"), "./bad.yaml");
    folder
        .run(&["--only-failed", "."])
        .code(1)
        .stdout(contains("bad.yaml").and(contains("good.yaml").not()))
        .stdout(contains("\n0 passed, 1 failed\n"));
    // Fixed: it passes, leaves the record, and nothing is left to re-run.
    std::fs::write(folder.path("bad.yaml"), scenario("bad", "hello", None)).unwrap();
    folder.run(&["--only-failed", "."]).code(0);
    folder
        .run(&["--only-failed", "."])
        .code(0)
        .stdout(contains("nothing to run"));
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn diagram_draws_a_passing_run_and_needs_one_scenario() {
    let folder = Folder::new(&[
        ("one.yaml", scenario("one", "hello", None)),
        ("two.yaml", scenario("two", "hello", None)),
    ]);
    folder
        .run(&["--diagram", "run.md", "one.yaml"])
        .code(0)
        .stdout(contains("PASS  one.yaml"))
        .stdout(contains("diagram: run.md"));
    let fenced = read(&folder.path("run.md"));
    assert!(
        fenced.starts_with("```mermaid\nsequenceDiagram\n"),
        "{fenced}"
    );
    assert!(fenced.contains("A->>S0: session/prompt"), "{fenced}");
    folder.run(&["--diagram", "run.mmd", "one.yaml"]).code(0);
    assert!(read(&folder.path("run.mmd")).starts_with("sequenceDiagram\n"));
    folder
        .run(&["--diagram", "both.md", "."])
        .code(2)
        .stderr(contains("2 scenarios are selected"));
}
