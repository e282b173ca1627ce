#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `scenarios/CLAIMS.md` stays honest: it lists every claim ID (exactly those of the
//! design's claims.md when that file sits beside the repository), each with proofs or
//! "not yet"; every proof exists; every scenario's `covers` is named among the proofs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use dsh_sim::claims::{ClaimsInputs, check, parse_claims_table, parse_design_claim_ids};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scenarios() -> Vec<(PathBuf, Vec<String>)> {
    let root = repo_root();
    let files = dsh_sim::discover::scenario_files(&[root.join("scenarios")]).unwrap();
    files
        .into_iter()
        .map(|file| {
            let scenario = dsh_sim::scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
            let relative = file.strip_prefix(&root).unwrap().to_owned();
            let covers = scenario.covers.iter().map(|c| c.to_string()).collect();
            (relative, covers)
        })
        .collect()
}

#[test]
fn claims_md_lists_every_claim_with_existing_proofs() {
    let root = repo_root();
    let claims_md = std::fs::read_to_string(root.join("scenarios/CLAIMS.md")).unwrap();
    let design = std::fs::read_to_string(root.join("../shared/design/claims.md")).ok();
    let inputs = ClaimsInputs {
        repo_root: &root,
        claims_md: &claims_md,
        design_ids: design.as_deref().map(parse_design_claim_ids),
        scenarios: scenarios(),
    };
    let problems = check(&inputs);
    assert!(
        problems.is_empty(),
        "CLAIMS.md problems:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_check_catches_missing_ids_missing_proofs_and_unlisted_scenarios() {
    let root = repo_root();
    let claims_md = "| C01 | x | `scenarios/nope.yaml` |\n| C02 | y | |\n| C02 | y | not yet |\n\
                     | C03 | z | `dsh-sim/tests/claims.rs::no_such_test` |\n";
    let inputs = ClaimsInputs {
        repo_root: &root,
        claims_md,
        design_ids: Some(BTreeSet::from(["C01".to_owned(), "C99".to_owned()])),
        scenarios: vec![(PathBuf::from("scenarios/a.yaml"), vec!["C03".to_owned()])],
    };
    let problems = check(&inputs).join("\n");
    for expected in [
        "CLAIMS.md does not list C04",
        "CLAIMS.md does not list B05",
        "lists C02 more than once",
        "proof file scenarios/nope.yaml does not exist",
        "has no `fn no_such_test`",
        "C99 is in claims.md but not in CLAIMS.md",
        "scenarios/a.yaml covers C03, but CLAIMS.md does not name it",
    ] {
        assert!(
            problems.contains(expected),
            "missing {expected:?} in:\n{problems}"
        );
    }
}

#[test]
fn the_table_parser_reads_proofs_and_not_yet() {
    let table = parse_claims_table(
        "| ID | Claim | Proofs |\n|---|---|---|\n| C18 | denial | `scenarios/tool_calls/denial.yaml`, `a.rs::t` |\n| C19 | rounds | not yet |\n",
    );
    assert_eq!(
        table.rows["C18"].proofs,
        ["scenarios/tool_calls/denial.yaml", "a.rs::t"]
    );
    assert!(table.rows["C19"].not_yet);
    assert!(table.rows["C19"].proofs.is_empty());
    assert!(!table.rows.contains_key("ID"));
}
