//! `ScratchDir`: the private, empty working directory a server runs in (never the DSH
//! workspace). Made `0700` (on Unix) and removed at teardown.

use std::path::{Path, PathBuf};

use crate::error::AdapterError;

/// A private scratch directory, removed by [`ScratchDir::remove`] or on drop.
#[derive(Debug)]
pub(crate) struct ScratchDir {
    dir: tempfile::TempDir,
}

impl ScratchDir {
    /// Makes a fresh directory under `root` (the system temp dir when `None`).
    pub(crate) fn create(root: Option<&Path>) -> Result<Self, AdapterError> {
        let root: PathBuf = root.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let mut builder = tempfile::Builder::new();
        builder.prefix("antigravity-acp-");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o700));
        }
        let dir = builder.tempdir_in(root).map_err(AdapterError::Scratch)?;
        Ok(Self { dir })
    }

    /// The directory's absolute path.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Removes the directory and everything the server left in it.
    pub(crate) fn remove(self) {
        if let Err(error) = self.dir.close() {
            tracing::warn!(kind = ?error.kind(), "could not remove a scratch directory");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_is_private() -> crate::TestResult {
        let root = tempfile::tempdir()?;
        let scratch = ScratchDir::create(Some(root.path()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(scratch.path())?.permissions().mode();
            assert_eq!(
                mode & 0o077,
                0,
                "scratch dir is readable by others: {mode:o}"
            );
        }
        scratch.remove();
        Ok(())
    }

    #[test]
    fn removing_scratch_takes_what_the_server_left() -> crate::TestResult {
        let root = tempfile::tempdir()?;
        let scratch = ScratchDir::create(Some(root.path()))?;
        let path = scratch.path().to_path_buf();
        std::fs::write(path.join("left-by-server"), b"x")?;
        scratch.remove();
        assert!(!path.exists());
        Ok(())
    }
}
