//! `dsh-sim lint`: checks scenario files without running them, fast enough for a
//! pre-commit hook. Each file must name the scenario schema in its first line, parse
//! strictly, say `fake_only` when it uses a key only the fake can play, and agree with
//! `CLAIMS.md` about the claims it covers. Every problem is one
//! `file:line:column: message` line.

use std::path::{Path, PathBuf};

use crate::commands::claims::{ClaimsTable, parse_claims_table};
use crate::scenario::{SCHEMA_FILE_NAME, SCHEMA_LINE_PREFIX};

/// The claims file, found in the same folder as the schema.
const CLAIMS_FILE_NAME: &str = "CLAIMS.md";

/// Every problem with the scenario at `path`, rendered `file:line:column: message`.
pub fn lint_file(path: &Path) -> Vec<String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) => return vec![format!("{}: cannot read: {error}", path.display())],
    };
    let at = |line: usize, column: usize, message: String| {
        format!("{}:{line}:{column}: {message}", path.display())
    };
    let mut problems = Vec::new();
    let root = scenarios_root(path);
    match &root {
        Some(root) => {
            let expected = format!("{SCHEMA_LINE_PREFIX}{}", schema_reference(root, path));
            if text.lines().next() != Some(expected.as_str()) {
                problems.push(at(
                    1,
                    1,
                    format!("the first line must be `{expected}` (the scenario schema, relative to this file's folder)"),
                ));
            }
        }
        None => problems.push(at(
            1,
            1,
            format!("no {SCHEMA_FILE_NAME} in this file's folder or any folder above it"),
        )),
    }
    let scenario = match crate::scenario::parse(&text, path) {
        Ok(scenario) => scenario,
        Err(error) => {
            problems.push(error.to_string());
            return problems;
        }
    };
    let fake_only = crate::scenario::agent_fit::fake_only_keys(&scenario);
    if scenario.fake_only.is_none() && !fake_only.is_empty() {
        problems.push(at(
            1,
            1,
            format!(
                "a real agent cannot play {}: say why in one line with `fake_only: <reason>` \
                 (else `dsh-sim run --agent` would run it)",
                fake_only.join(", ")
            ),
        ));
    }
    let Some(root) = root else {
        return problems;
    };
    let claims_path = root.join(CLAIMS_FILE_NAME);
    let Ok(claims_md) = std::fs::read_to_string(&claims_path) else {
        return problems;
    };
    let table = parse_claims_table(&claims_md);
    let proof = proof_name(&root, path);
    let covers: Vec<String> = scenario.covers.iter().map(ToString::to_string).collect();
    for id in &covers {
        let named = table
            .rows
            .get(id)
            .is_some_and(|row| row.proofs.contains(&proof));
        if !named {
            let (line, column) = locate_claim(&text, id);
            problems.push(at(
                line,
                column,
                format!(
                    "covers {id}, but {CLAIMS_FILE_NAME} does not name `{proof}` as a proof of {id}"
                ),
            ));
        }
    }
    problems.extend(rows_naming_uncovered(&table, &proof, &covers, &claims_path));
    problems
}

/// `CLAIMS.md` rows naming the scenario as a proof of a claim it does not cover.
fn rows_naming_uncovered(
    table: &ClaimsTable,
    proof: &str,
    covers: &[String],
    claims_path: &Path,
) -> Vec<String> {
    table
        .rows
        .iter()
        .filter(|(id, row)| row.proofs.iter().any(|p| p == proof) && !covers.contains(id))
        .map(|(id, row)| {
            format!(
                "{}:{}:1: names `{proof}` as a proof of {id}, but it does not cover {id}",
                claims_path.display(),
                row.line
            )
        })
        .collect()
}

/// The nearest folder at or above the scenario's own that holds the schema.
fn scenarios_root(path: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(path).ok()?;
    absolute
        .ancestors()
        .skip(1)
        .find(|folder| folder.join(SCHEMA_FILE_NAME).is_file())
        .map(Path::to_owned)
}

/// The schema's path relative to the scenario's folder (`../scenario.schema.json`).
fn schema_reference(root: &Path, path: &Path) -> String {
    let depth = std::path::absolute(path)
        .ok()
        .and_then(|file| {
            file.parent()?
                .strip_prefix(root)
                .ok()
                .map(|p| p.components().count())
        })
        .unwrap_or(0);
    format!("{}{SCHEMA_FILE_NAME}", "../".repeat(depth))
}

/// How `CLAIMS.md` names the scenario: its path from the repository root (the scenarios
/// folder's parent), with slashes, e.g. `scenarios/tool_calls/denial.yaml`.
fn proof_name(root: &Path, path: &Path) -> String {
    let repo = root.parent().unwrap_or(root);
    let shown = std::path::absolute(path)
        .ok()
        .and_then(|file| file.strip_prefix(repo).ok().map(Path::to_owned))
        .unwrap_or_else(|| path.to_owned());
    crate::scenario::slash_path(&shown)
}

/// The 1-based line and column of `id` in the `covers` list (or of `covers:` itself).
fn locate_claim(text: &str, id: &str) -> (usize, usize) {
    let Some(covers) = text.find("\ncovers:").map(|at| at + 1) else {
        return (1, 1);
    };
    let offset = text[covers..]
        .find(id)
        .map_or(covers, |relative| covers + relative);
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |p| p + 1) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_located_in_flow_and_block_lists() {
        let flow = "# x\nname: a\ncovers: [C01, C18]\n";
        assert_eq!(locate_claim(flow, "C18"), (3, 15));
        let block = "name: a\ncovers:\n  - C01\n  - C18\n";
        assert_eq!(locate_claim(block, "C18"), (4, 5));
        assert_eq!(locate_claim("name: a\n", "C18"), (1, 1));
    }
}
