//! What a failed scenario (or, on request, any scenario) leaves behind, under
//! `<artefact root>/<scenario path without .yaml>/`: the reasons, the DSH-side
//! transcript (readable and JSON), the fake's journal files with the server's stderr
//! next to each (redacted), and the run drawn as a Mermaid sequence diagram.

use std::path::{Component, Path, PathBuf};

use fake_antigravity::journal::JournalEntry;

use crate::host::transcript::Transcript;
use crate::runner::stderr_redaction::redact_stderr;

/// The artefact folder of the scenario at `scenario_path` under `root`.
pub fn folder_for(root: &Path, scenario_path: &Path) -> PathBuf {
    let relative: PathBuf = scenario_path
        .with_extension("")
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect();
    root.join(relative)
}

/// Removes stale artefacts of a scenario that now passes.
pub fn clear(folder: &Path) {
    if folder.exists()
        && let Err(error) = std::fs::remove_dir_all(folder)
    {
        tracing::warn!(%error, folder = %folder.display(), "stale artefacts stay behind");
    }
}

/// Everything to leave behind for a failed scenario.
pub struct FailureRecord<'a> {
    /// Why the scenario failed.
    pub reasons: &'a [String],
    /// The DSH-side transcript.
    pub transcript: &'a Transcript,
    /// The fake's journal folder (absent in `--server` mode).
    pub journal_dir: Option<&'a Path>,
    /// The parsed journal, for the diagram.
    pub journal: &'a [Vec<JournalEntry>],
}

/// Writes the run's Mermaid sequence diagram to `path`: fenced as a Markdown `mermaid`
/// block when the name ends in `.md`, the bare diagram (for `.mmd`, mermaid-cli, the
/// Mermaid live editor) otherwise.
pub fn write_diagram(path: &Path, journal: &[Vec<JournalEntry>]) -> std::io::Result<()> {
    let diagram = crate::runner::sequence::mermaid(journal);
    let text = if path.extension().is_some_and(|ext| ext == "md") {
        format!("```mermaid\n{diagram}```\n")
    } else {
        diagram
    };
    std::fs::write(path, text)
}

/// Writes the record into `folder` (replacing what was there).
pub fn write(folder: &Path, record: &FailureRecord<'_>) -> std::io::Result<()> {
    clear(folder);
    std::fs::create_dir_all(folder)?;
    std::fs::write(folder.join("reasons.txt"), record.reasons.join("\n") + "\n")?;
    std::fs::write(folder.join("transcript.txt"), record.transcript.render())?;
    let json = serde_json::to_string_pretty(record.transcript).map_err(std::io::Error::other)?;
    std::fs::write(folder.join("transcript.json"), json)?;
    if let Some(journal_dir) = record.journal_dir {
        let copy = folder.join("journal");
        std::fs::create_dir_all(&copy)?;
        for entry in std::fs::read_dir(journal_dir)? {
            let path = entry?.path();
            let Some(name) = path.file_name() else {
                continue;
            };
            // The server's stderr (B05), redacted as the journal redacts credentials.
            if path.extension().is_some_and(|ext| ext == "stderr") {
                let text = String::from_utf8_lossy(&std::fs::read(&path)?).into_owned();
                std::fs::write(copy.join(name), redact_stderr(&text))?;
            } else {
                std::fs::copy(&path, copy.join(name))?;
            }
        }
        write_diagram(&folder.join("sequence.md"), record.journal)?;
    }
    Ok(())
}
