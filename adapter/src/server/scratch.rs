//! `ScratchDir`: the private, empty working directory a server runs in (never the DSH
//! workspace). Made `0700` (on Unix) and removed at teardown. Also the two other
//! directories a server is given: its private temp directory inside its scratch root, and
//! its credentials home when it does not exist yet ([`ensure_private_dir`]).

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

/// Makes `path` (and any missing parent) `0700` on Unix, unless it exists: a server's
/// private temp directory (`<scratch root>/tmp`), or its credentials home, which a
/// confined server could not create itself (its parent, the user's home, is out of its
/// reach). Nothing is written inside.
pub(crate) fn ensure_private_dir(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(path)
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
    fn a_private_dir_is_made_0700_once() -> crate::TestResult {
        let root = tempfile::tempdir()?;
        let dir = root.path().join("home").join(".gemini");
        ensure_private_dir(&dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&dir)?.permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        }
        std::fs::write(dir.join("kept"), b"x")?;
        ensure_private_dir(&dir)?;
        assert!(dir.join("kept").exists());
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
