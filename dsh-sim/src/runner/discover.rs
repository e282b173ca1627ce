//! Finding scenario files: each path given is a file, or a folder searched recursively
//! for `*.yaml`; the result is sorted and free of duplicates.

use std::path::{Path, PathBuf};

/// Why the scenario files could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// A path could not be read.
    #[error("{}: {source}", path.display())]
    Unreadable {
        /// The path.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
}

/// Every scenario file named by `paths`, sorted.
pub fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, DiscoverError> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|source| DiscoverError::Unreadable {
            path: path.clone(),
            source,
        })?;
        if meta.is_dir() {
            walk(path, &mut files)?;
        } else {
            files.push(path.clone());
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), DiscoverError> {
    let unreadable = |source| DiscoverError::Unreadable {
        path: dir.to_owned(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let path = entry.map_err(unreadable)?.path();
        if path.is_dir() {
            walk(&path, files)?;
        } else if path.extension().is_some_and(|ext| ext == "yaml") {
            files.push(path);
        }
    }
    Ok(())
}
