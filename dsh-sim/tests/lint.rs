#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `dsh-sim lint`: the schema line, strict parsing and the claims, without running; the
//! real suite lints clean (so every scenario names the schema in its first line).

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::str::contains;

const LINE: &str = "# yaml-language-server: $schema=../scenario.schema.json\n";
const CHAT: &str = "dsh:\n  chat:\n    - user: hi\n";

#[test]
fn the_scenario_suite_lints_clean() {
    cargo_bin_cmd!("dsh-sim")
        .args(["lint", "../scenarios"])
        .assert()
        .code(0)
        .stdout(contains(" files, 0 problems\n"));
}

#[test]
fn each_problem_is_reported_at_its_file_line_and_column() {
    let root = tempfile::tempdir().unwrap();
    let scenarios = root.path().join("scenarios");
    let area = scenarios.join("area");
    std::fs::create_dir_all(&area).unwrap();
    std::fs::write(scenarios.join("scenario.schema.json"), "{}").unwrap();
    std::fs::write(
        scenarios.join("CLAIMS.md"),
        "| claim | text | proofs |\n|---|---|---|\n\
         | C18 | x | `scenarios/area/named.yaml` |\n| C19 | y | `scenarios/area/named.yaml` |\n",
    )
    .unwrap();
    let write = |name: &str, text: String| std::fs::write(area.join(name), text).unwrap();
    write("clean.yaml", format!("{LINE}name: a\ncovers: []\n{CHAT}"));
    write(
        "named.yaml",
        format!("{LINE}name: b\ncovers: [C18]\n{CHAT}"),
    );
    write(
        "unnamed.yaml",
        format!("{LINE}name: c\ncovers: [C18]\n{CHAT}"),
    );
    write("no_line.yaml", format!("name: d\ncovers: []\n{CHAT}"));
    write(
        "typo.yaml",
        format!("{LINE}name: e\ncovers: []\nexpct: {{}}\n{CHAT}"),
    );
    let output = cargo_bin_cmd!("dsh-sim")
        .current_dir(root.path())
        .args(["lint", "scenarios"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    // Windows paths written with `/`, so one expectation holds on every system.
    let stdout = String::from_utf8(output).unwrap().replace('\\', "/");
    let claims = root.path().join("scenarios/CLAIMS.md");
    let claims = claims.display().to_string().replace('\\', "/");
    for expected in [
        "scenarios/area/unnamed.yaml:3:10: covers C18, but CLAIMS.md does not name `scenarios/area/unnamed.yaml` as a proof of C18".to_owned(),
        "scenarios/area/no_line.yaml:1:1: the first line must be `# yaml-language-server: $schema=../scenario.schema.json`".to_owned(),
        "scenarios/area/typo.yaml:4:1: unknown field `expct`".to_owned(),
        format!("{claims}:4:1: names `scenarios/area/named.yaml` as a proof of C19, but it does not cover C19"),
        "5 files, 4 problems".to_owned(),
    ] {
        assert!(stdout.contains(&expected), "{expected}\nmissing from\n{stdout}");
    }
    assert!(!stdout.contains("clean.yaml"), "{stdout}");
}

/// A scenario that uses a key only the fake can play must say why with `fake_only`, or a
/// real agent (`run --agent`) would be handed it; with the reason it lints clean.
#[test]
fn a_fake_only_key_without_fake_only_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let scenarios = root.path().join("scenarios");
    let area = scenarios.join("area");
    std::fs::create_dir_all(&area).unwrap();
    std::fs::write(scenarios.join("scenario.schema.json"), "{}").unwrap();
    std::fs::write(scenarios.join("CLAIMS.md"), "| claim | text | proofs |\n").unwrap();
    let quirk = "fake:\n  quirks: { resend_pending_tool_call: true }\n";
    std::fs::write(
        area.join("unsaid.yaml"),
        format!("{LINE}name: a\ncovers: []\n{quirk}{CHAT}"),
    )
    .unwrap();
    std::fs::write(
        area.join("said.yaml"),
        format!("{LINE}name: b\ncovers: []\nfake_only: \"a quirk of 1.3.0's wire\"\n{quirk}{CHAT}"),
    )
    .unwrap();
    let output = cargo_bin_cmd!("dsh-sim")
        .arg("lint")
        .arg(&scenarios)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let shown = String::from_utf8_lossy(&output);
    assert!(
        shown.contains("unsaid.yaml:1:1: a real agent cannot play `fake.quirks`"),
        "{shown}"
    );
    assert!(!shown.contains("/said.yaml:1:1"), "{shown}");
    assert!(shown.contains("2 files, 1 problems"), "{shown}");
}
