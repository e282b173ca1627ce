//! A scenario's files on the real filesystem: the ones it plants in its workspace before
//! the chat (`dsh.files`), the workspace named in the fake's native paths
//! (`{workspace}/…`), and the judge of `expect.files` after the run, from outside.

use std::collections::BTreeMap;
use std::path::Path;

use fake_antigravity::script::{Script, Step};

use crate::scenario::{FileCheck, WORKSPACE_PLACEHOLDER, WorkspacePath};

/// Writes every planted file under `workspace` (making its folders).
pub fn plant(workspace: &Path, files: &BTreeMap<WorkspacePath, String>) -> Result<(), String> {
    for (path, content) in files {
        let target = workspace.join(path.as_str());
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot plant {}: {e}", path.as_str()))?;
        }
        std::fs::write(&target, content)
            .map_err(|e| format!("cannot plant {}: {e}", path.as_str()))?;
    }
    Ok(())
}

/// The script with `{workspace}` in every native step's `path` replaced by `workspace`.
pub fn with_workspace(script: &Script, workspace: &Path) -> Script {
    let mut script = script.clone();
    let root = workspace.display().to_string();
    for turn in &mut script.turns {
        for step in &mut turn.steps {
            if let Step::Native(native) = step
                && let Some(path) = &mut native.path
            {
                *path = path.replace(WORKSPACE_PLACEHOLDER, &root);
            }
        }
    }
    script
}

/// Every `expect.files` check that does not hold on the real filesystem.
pub fn judge(workspace: &Path, checks: &BTreeMap<WorkspacePath, FileCheck>) -> Vec<String> {
    let mut failures = Vec::new();
    for (path, check) in checks {
        let target = workspace.join(path.as_str());
        let exists = target.symlink_metadata().is_ok();
        if let Some(expected) = check.exists
            && expected != exists
        {
            failures.push(match expected {
                true => format!("files: {} does not exist", path.as_str()),
                false => format!(
                    "files: {} exists (nothing may be left there)",
                    path.as_str()
                ),
            });
        }
        if let Some(expected) = &check.content {
            match std::fs::read_to_string(&target) {
                Ok(actual) if actual == *expected => {}
                Ok(actual) => failures.push(format!(
                    "files: {} holds {actual:?}, expected {expected:?}",
                    path.as_str()
                )),
                Err(error) => {
                    failures.push(format!("files: {} cannot be read: {error}", path.as_str()))
                }
            }
        }
    }
    failures
}
