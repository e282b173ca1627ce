//! Choosing which scenarios `dsh-sim run` runs: a text filter on path or name, and the
//! failures of earlier runs, which each run records in `<artefact root>/last-failed.txt`
//! (one scenario path a line, as it was given; runs of a subset update only their own
//! entries, so the file always holds what failed the last time each scenario ran).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The file, under the artefact root, that remembers which scenarios failed.
pub const LAST_FAILED_FILE: &str = "last-failed.txt";

/// The scenarios whose path or `name` contains `text`, ignoring case. A file that does
/// not parse matches on its path only.
pub fn filter(files: Vec<PathBuf>, text: &str) -> Vec<PathBuf> {
    let wanted = text.to_lowercase();
    files
        .into_iter()
        .filter(|file| {
            file.display().to_string().to_lowercase().contains(&wanted)
                || crate::scenario::load(file)
                    .is_ok_and(|scenario| scenario.name.to_lowercase().contains(&wanted))
        })
        .collect()
}

/// The scenarios that failed the last time they ran, as recorded in `record`.
pub fn last_failed(record: &Path) -> BTreeSet<PathBuf> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(PathBuf::from)
        .collect()
}

/// Updates `record` after a run: each scenario that ran is listed when it failed and
/// dropped when it did not; the others keep their entries.
pub fn record_run(record: &Path, outcomes: &[(PathBuf, bool)]) -> std::io::Result<()> {
    let mut failed = last_failed(record);
    for (file, did_fail) in outcomes {
        if *did_fail {
            failed.insert(file.clone());
        } else {
            failed.remove(file);
        }
    }
    if let Some(folder) = record.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let text: String = failed
        .iter()
        .map(|file| format!("{}\n", file.display()))
        .collect();
    std::fs::write(record, text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_run_updates_only_the_scenarios_it_ran() {
        let folder = tempfile::tempdir().unwrap();
        let record = folder.path().join("deep").join(LAST_FAILED_FILE);
        assert!(last_failed(&record).is_empty());
        record_run(&record, &[("a.yaml".into(), true), ("b.yaml".into(), true)]).unwrap();
        record_run(
            &record,
            &[("a.yaml".into(), false), ("c.yaml".into(), true)],
        )
        .unwrap();
        let failed: Vec<_> = last_failed(&record).into_iter().collect();
        assert_eq!(failed, [PathBuf::from("b.yaml"), PathBuf::from("c.yaml")]);
    }
}
