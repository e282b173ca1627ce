//! Traceability between the design's claims (`docs/design.md`), `scenarios/CLAIMS.md` and
//! the scenarios.
//!
//! `CLAIMS.md` holds a Markdown table, one row per claim: `| C18 | text | grade | proofs |`.
//! The grade is one of [`Grade`]'s three words. The last cell lists proofs in backticks (a
//! scenario such as `scenarios/tool_calls/denial.yaml`, or a Rust test as
//! `path/to/file.rs::test_name`) and says what breaks them ("fails if ..."), or what is
//! missing. [`check`] keeps the file honest.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::scenario::{all_claim_ids, is_claim_id};

/// How far a claim is proven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grade {
    /// A named test or scenario fails when the claim breaks, and the row says which break
    /// ("fails if ...").
    Proven,
    /// Something is proven; the row says what is missing ("missing: ...").
    Partly,
    /// Nothing proves the claim yet.
    NotYet,
}

impl Grade {
    /// The grade a cell spells exactly (`proven`, `partly`, `not yet`), if any.
    pub fn parse(cell: &str) -> Option<Self> {
        match cell {
            "proven" => Some(Self::Proven),
            "partly" => Some(Self::Partly),
            "not yet" => Some(Self::NotYet),
            _ => None,
        }
    }
}

/// One row of `CLAIMS.md`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaimRow {
    /// The proofs it names, as written (paths relative to the repository root).
    pub proofs: Vec<String>,
    /// The grade cell as written (a row of four cells: id, claim, grade, proofs; empty
    /// when the row has fewer cells).
    pub grade: String,
    /// The proofs cell as written.
    pub proofs_text: String,
    /// Its 1-based line in the file.
    pub line: usize,
}

impl ClaimRow {
    /// The row's grade, when its grade cell spells one.
    pub fn grade(&self) -> Option<Grade> {
        Grade::parse(&self.grade)
    }
}

/// The rows of `CLAIMS.md` by claim ID, and the IDs that appear more than once.
#[derive(Debug, Clone, Default)]
pub struct ClaimsTable {
    /// Rows by ID.
    pub rows: BTreeMap<String, ClaimRow>,
    /// IDs listed twice or more.
    pub duplicates: Vec<String>,
}

/// Reads the claim rows of a `CLAIMS.md` text (table rows whose first cell looks like
/// `C12` or `B03`).
pub fn parse_claims_table(text: &str) -> ClaimsTable {
    let mut table = ClaimsTable::default();
    for (n, line) in text.lines().enumerate() {
        let cells: Vec<&str> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        let (Some(id), Some(last)) = (cells.first(), cells.last()) else {
            continue;
        };
        if cells.len() < 2 || !looks_like_id(id) {
            continue;
        }
        let row = ClaimRow {
            proofs: backticked(last),
            grade: if cells.len() >= 4 {
                cells[cells.len() - 2].to_owned()
            } else {
                String::new()
            },
            proofs_text: (*last).to_owned(),
            line: n + 1,
        };
        if table.rows.insert((*id).to_owned(), row).is_some() {
            table.duplicates.push((*id).to_owned());
        }
    }
    table
}

/// The claim IDs a design text lists as `- C01 …` lines (`docs/design.md`, and the shared
/// design's `claims.md` it was written from).
pub fn parse_design_claim_ids(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| line.trim_start().strip_prefix("- "))
        .filter_map(|rest| rest.split_whitespace().next())
        .filter(|id| looks_like_id(id))
        .map(str::to_owned)
        .collect()
}

fn looks_like_id(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some('C' | 'B')) && text.len() == 3 && chars.all(|c| c.is_ascii_digit())
}

fn backticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Everything [`check`] needs.
#[derive(Debug, Clone)]
pub struct ClaimsInputs<'a> {
    /// The repository root (proof paths are relative to it).
    pub repo_root: &'a Path,
    /// The text of `scenarios/CLAIMS.md`.
    pub claims_md: &'a str,
    /// The IDs `docs/design.md` lists (`None` skips the comparison).
    pub design_ids: Option<BTreeSet<String>>,
    /// Each scenario (path relative to the repository root) and the IDs it covers.
    pub scenarios: Vec<(PathBuf, Vec<String>)>,
}

/// Every way `CLAIMS.md` and the scenarios disagree, as readable sentences.
pub fn check(inputs: &ClaimsInputs<'_>) -> Vec<String> {
    let table = parse_claims_table(inputs.claims_md);
    let mut problems: Vec<String> = table
        .duplicates
        .iter()
        .map(|id| format!("CLAIMS.md lists {id} more than once"))
        .collect();
    let known: BTreeSet<String> = all_claim_ids().into_iter().collect();
    let listed: BTreeSet<String> = table.rows.keys().cloned().collect();
    for id in known.difference(&listed) {
        problems.push(format!("CLAIMS.md does not list {id}"));
    }
    for id in listed.iter().filter(|id| !is_claim_id(id)) {
        problems.push(format!("CLAIMS.md lists {id}, which is not a claim ID"));
    }
    if let Some(design) = &inputs.design_ids {
        for id in design.symmetric_difference(&listed) {
            problems.push(format!(
                "{id} is in {} but not in {}",
                if design.contains(id) {
                    "docs/design.md"
                } else {
                    "CLAIMS.md"
                },
                if design.contains(id) {
                    "CLAIMS.md"
                } else {
                    "docs/design.md"
                }
            ));
        }
    }
    for (id, row) in &table.rows {
        if let Some(why) = grade_problem(row) {
            problems.push(format!("CLAIMS.md:{}: {id}: {why}", row.line));
        }
        for proof in &row.proofs {
            if let Err(why) = proof_exists(inputs.repo_root, proof) {
                problems.push(format!("CLAIMS.md:{}: {id}: {why}", row.line));
            }
        }
    }
    check_scenarios_against_rows(inputs, &table, &mut problems);
    problems
}

/// What is wrong with a row's grade, if anything: it must be one of the three words, a
/// `proven` row names a proof and says what breaks it ("fails if"), a `partly` row names a
/// proof and says what is missing ("missing").
fn grade_problem(row: &ClaimRow) -> Option<String> {
    let text = row.proofs_text.to_lowercase();
    match row.grade() {
        None => Some(format!(
            "grade `{}` is not one of `proven`, `partly`, `not yet`",
            row.grade
        )),
        Some(Grade::Proven) if row.proofs.is_empty() => {
            Some("graded proven but names no proof".to_owned())
        }
        Some(Grade::Proven) if !text.contains("fails if") => Some(
            "graded proven but does not say what breaks its proof (\"fails if ...\")".to_owned(),
        ),
        Some(Grade::Partly) if row.proofs.is_empty() => {
            Some("graded partly but names no proof".to_owned())
        }
        Some(Grade::Partly) if !text.contains("missing") => {
            Some("graded partly but does not say what is missing (\"missing: ...\")".to_owned())
        }
        Some(_) => None,
    }
}

/// A scenario covering a claim must be named among its proofs, and a scenario named as
/// a proof must cover that claim.
fn check_scenarios_against_rows(
    inputs: &ClaimsInputs<'_>,
    table: &ClaimsTable,
    problems: &mut Vec<String>,
) {
    let covers: BTreeMap<String, BTreeSet<String>> = inputs
        .scenarios
        .iter()
        .map(|(path, ids)| {
            (
                crate::scenario::slash_path(path),
                ids.iter().cloned().collect(),
            )
        })
        .collect();
    for (path, ids) in &covers {
        for id in ids {
            if !is_claim_id(id) {
                problems.push(format!("{path} covers {id}, which is not a claim ID"));
            } else if !table
                .rows
                .get(id)
                .is_some_and(|row| row.proofs.contains(path))
            {
                problems.push(format!(
                    "{path} covers {id}, but CLAIMS.md does not name it as a proof of {id}"
                ));
            }
        }
    }
    for (id, row) in &table.rows {
        for proof in row.proofs.iter().filter(|p| p.ends_with(".yaml")) {
            if let Some(ids) = covers.get(proof)
                && !ids.contains(id)
            {
                problems.push(format!(
                    "CLAIMS.md:{}: {proof} is named for {id} but does not cover it",
                    row.line
                ));
            }
        }
    }
}

/// A proof is a file that exists, or `file.rs::test_name` whose file defines
/// `fn test_name`.
fn proof_exists(repo_root: &Path, proof: &str) -> Result<(), String> {
    let (file, test) = match proof.split_once("::") {
        Some((file, test)) => (file, Some(test)),
        None => (proof, None),
    };
    let path = repo_root.join(file);
    let text =
        std::fs::read_to_string(&path).map_err(|_| format!("proof file {file} does not exist"))?;
    match test {
        Some(test) if !defines_fn(&text, test) => Err(format!("{file} has no `fn {test}`")),
        _ => Ok(()),
    }
}

fn defines_fn(text: &str, name: &str) -> bool {
    let needle = format!("fn {name}");
    text.match_indices(&needle).any(|(at, _)| {
        text[at + needle.len()..]
            .chars()
            .next()
            .is_some_and(|c| c == '(' || c == '<' || c.is_whitespace())
    })
}
