//! `scenarios/CLAIMS.md` stays honest: it lists exactly the claim IDs of the in-repo design
//! (`docs/design.md`), each with proofs or "not yet"; every proof exists; every scenario's
//! `covers` is named among the proofs. Where the design the repository was seeded from still
//! sits beside the checkout (a `shared` folder next to it, as on the project's own machines),
//! the in-repo list must not have drifted from its claims; a clone alone skips that check.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use dsh_sim::commands::claims::{
    ClaimsInputs, Grade, check, parse_claims_table, parse_design_claim_ids,
};
use dsh_sim::scenario::all_claim_ids;
use test_support::{Failure, TestResult};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn design_ids() -> Result<BTreeSet<String>, Failure> {
    let design = std::fs::read_to_string(repo_root().join("docs/design.md"))?;
    Ok(parse_design_claim_ids(&design))
}

fn scenarios() -> Result<Vec<(PathBuf, Vec<String>)>, Failure> {
    let root = repo_root();
    let files = dsh_sim::runner::discover::scenario_files(&[root.join("scenarios")])?;
    files
        .into_iter()
        .map(|file| {
            let scenario = dsh_sim::scenario::load(&file).map_err(|e| e.to_string())?;
            let relative = file.strip_prefix(&root)?.to_owned();
            let covers = scenario.covers.iter().map(|c| c.to_string()).collect();
            Ok((relative, covers))
        })
        .collect()
}

#[test]
fn claims_md_lists_every_claim_of_the_design_with_existing_proofs() -> TestResult {
    let root = repo_root();
    let claims_md = std::fs::read_to_string(root.join("scenarios/CLAIMS.md"))?;
    let inputs = ClaimsInputs {
        repo_root: &root,
        claims_md: &claims_md,
        design_ids: Some(design_ids()?),
        scenarios: scenarios()?,
    };
    let problems = check(&inputs);
    assert!(
        problems.is_empty(),
        "CLAIMS.md problems:\n{}",
        problems.join("\n")
    );
    Ok(())
}

#[test]
fn the_design_lists_every_claim_id() -> TestResult {
    let known: BTreeSet<String> = all_claim_ids().into_iter().collect();
    assert_eq!(design_ids()?, known);
    Ok(())
}

/// Passes without looking when the shared folder is absent (a clone of this repository
/// alone).
#[test]
fn the_design_has_not_drifted_from_the_shared_claims() -> TestResult {
    let shared = repo_root().join("../shared/design/claims.md");
    let Ok(shared) = std::fs::read_to_string(shared) else {
        return Ok(());
    };
    assert_eq!(design_ids()?, parse_design_claim_ids(&shared));
    Ok(())
}

#[test]
fn the_check_catches_missing_ids_missing_proofs_and_unlisted_scenarios() {
    let root = repo_root();
    let claims_md = "| C01 | x | proven | `scenarios/nope.yaml` fails if x |\n| C02 | y | proven | |\n\
                     | C02 | y | not yet | |\n\
                     | C03 | z | partly | `dsh-sim/tests/claims.rs::no_such_test` missing: more |\n";
    let inputs = ClaimsInputs {
        repo_root: &root,
        claims_md,
        design_ids: Some(BTreeSet::from(["C01".to_owned(), "C99".to_owned()])),
        scenarios: vec![(PathBuf::from("scenarios/a.yaml"), vec!["C03".to_owned()])],
    };
    let problems = check(&inputs).join("\n");
    for expected in [
        "CLAIMS.md does not list C04",
        "CLAIMS.md does not list B08",
        "lists C02 more than once",
        "proof file scenarios/nope.yaml does not exist",
        "has no `fn no_such_test`",
        "C99 is in docs/design.md but not in CLAIMS.md",
        "scenarios/a.yaml covers C03, but CLAIMS.md does not name it",
    ] {
        assert!(
            problems.contains(expected),
            "missing {expected:?} in:\n{problems}"
        );
    }
}

#[test]
fn the_table_parser_reads_grades_and_proofs() {
    let table = parse_claims_table(
        "| ID | Claim | Grade | Proofs |\n|---|---|---|---|\n\
         | C18 | denial | proven | `scenarios/tool_calls/denial.yaml`, `a.rs::t` fails if x |\n\
         | C19 | rounds | not yet | |\n",
    );
    assert_eq!(
        table.rows["C18"].proofs,
        ["scenarios/tool_calls/denial.yaml", "a.rs::t"]
    );
    assert_eq!(table.rows["C18"].grade(), Some(Grade::Proven));
    assert_eq!(table.rows["C19"].grade(), Some(Grade::NotYet));
    assert!(table.rows["C19"].proofs.is_empty());
    assert!(!table.rows.contains_key("ID"));
}

/// Only the three grades are accepted, and each says what it must: `proven` names a proof
/// and what breaks it, `partly` names a proof and what is missing.
#[test]
fn only_three_grades_are_accepted_and_each_says_what_it_must() {
    let root = repo_root();
    let claims_md = "| C01 | a | met | `dsh-sim/tests/claims.rs` |\n\
                     | C02 | b | proven | `dsh-sim/tests/claims.rs` |\n\
                     | C03 | c | proven | nothing named, fails if x |\n\
                     | C04 | d | partly | `dsh-sim/tests/claims.rs` |\n\
                     | C05 | e | partly | missing: everything |\n\
                     | C06 | f | Proven | `dsh-sim/tests/claims.rs` fails if x |\n\
                     | C07 | g | not yet | |\n\
                     | C08 | h | proven | `dsh-sim/tests/claims.rs` fails if x |\n\
                     | C09 | i | partly | `dsh-sim/tests/claims.rs`; missing: y |\n\
                     | C10 | j | no grade cell |\n";
    let inputs = ClaimsInputs {
        repo_root: &root,
        claims_md,
        design_ids: None,
        scenarios: vec![],
    };
    let problems = check(&inputs).join("\n");
    for expected in [
        "C01: grade `met` is not one of",
        "C02: graded proven but does not say what breaks its proof",
        "C03: graded proven but names no proof",
        "C04: graded partly but does not say what is missing",
        "C05: graded partly but names no proof",
        "C06: grade `Proven` is not one of",
        "C10: grade `` is not one of",
    ] {
        assert!(
            problems.contains(expected),
            "missing {expected:?} in:\n{problems}"
        );
    }
    for fine in ["C07:", "C08:", "C09:"] {
        assert!(!problems.contains(fine), "{fine} flagged in:\n{problems}");
    }
}
