//! The one folder walk of the tidy checks: every file below a folder, in order, leaving out
//! the folders the caller turns away by name.

use std::path::{Path, PathBuf};

/// Every file below `root`, sorted, entering only the folders whose name `enter` accepts.
pub fn files_below(root: &Path, enter: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                if enter(&name) {
                    pending.push(path);
                }
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The folders that hold nothing of the project's own: build output, npm's installs and
/// hidden folders.
pub fn ours(name: &str) -> bool {
    name != "target" && name != "node_modules" && !name.starts_with('.')
}
