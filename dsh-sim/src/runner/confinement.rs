//! The runner's side of the server's confinement (B06): what a confined server launched
//! by the runner must also reach beyond what the adapter grants by itself. The fake reads
//! its `--script` and writes its `--journal`; the relay (`dsh-sim tap`) writes its
//! journal and must run the command it relays, from that command's own directory; an
//! installed stand-in execs the dsh-sim binary. The runner adds exactly those paths to
//! the adapter's extra lists, on top of the user's `--allow-read` / `--allow-write`, so
//! every scenario runs confined by default.

use std::path::{Path, PathBuf};

use antigravity_acp::{AdapterConfig, ServerCommand};

/// What the user asked for on the command line.
#[derive(Debug, Clone, Default)]
pub struct ConfinementOptions {
    /// `--confinement MODE` (default: the adapter's, `best_effort`).
    pub mode: Option<antigravity_acp::ConfinementMode>,
    /// `--allow-read PATH`, repeatable.
    pub allow_read: Vec<PathBuf>,
    /// `--allow-write PATH`, repeatable.
    pub allow_write: Vec<PathBuf>,
}

/// The paths a server started by the runner touches beyond its own folders.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunnerPaths {
    /// Read (and execute).
    pub read: Vec<PathBuf>,
    /// Read and write.
    pub write: Vec<PathBuf>,
}

impl RunnerPaths {
    /// The fake run from the dsh-sim binary `program` (directly, or by an installed
    /// stand-in that execs it): it reads `script` and writes into `journal_dir`.
    pub fn fake(program: &Path, script: &Path, journal_dir: &Path) -> Self {
        Self {
            read: vec![program.to_path_buf(), script.to_path_buf()],
            write: vec![journal_dir.to_path_buf()],
        }
    }

    /// `command` behind the relay: the relay writes into `journal_dir` and execs the
    /// command, which needs its own directory.
    pub fn relayed(command: &ServerCommand, journal_dir: &Path) -> Self {
        Self {
            read: program_dirs(&command.program),
            write: vec![journal_dir.to_path_buf()],
        }
    }

    /// Applies these paths, then the user's options, to `config`.
    pub fn apply(self, options: &ConfinementOptions, config: &mut AdapterConfig) {
        if let Some(mode) = options.mode {
            config.confinement = mode;
        }
        config.extra_read_paths = self.read;
        config
            .extra_read_paths
            .extend(options.allow_read.iter().cloned());
        config.extra_write_paths = self.write;
        config
            .extra_write_paths
            .extend(options.allow_write.iter().cloned());
    }
}

/// The directories a relayed command needs to run: the one its program is found in (on
/// this process's `PATH` when the command names no directory, as the relay's exec finds
/// it) and, when that is a link, the one its real file is in. Computed here rather than
/// borrowed from the adapter, so that the confinement the adapter builds is checked
/// against an independent answer.
pub fn program_dirs(program: &Path) -> Vec<PathBuf> {
    let named_dir = program.is_absolute() || program.components().nth(1).is_some();
    let found = if named_dir {
        std::path::absolute(program).ok()
    } else {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(program))
                .find(|candidate| candidate.is_file())
        })
    };
    let Some(found) = found else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = found.parent().map(Path::to_path_buf).into_iter().collect();
    let real_dir = std::fs::canonicalize(&found)
        .ok()
        .and_then(|real| real.parent().map(Path::to_path_buf));
    if let Some(real_dir) = real_dir
        && !dirs.contains(&real_dir)
    {
        dirs.push(real_dir);
    }
    dirs
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_users_paths_come_on_top_of_the_runners() {
        let mut config = AdapterConfig::default();
        let options = ConfinementOptions {
            mode: Some(antigravity_acp::ConfinementMode::Off),
            allow_read: vec!["/r".into()],
            allow_write: vec!["/w".into()],
        };
        RunnerPaths::fake(
            Path::new("/bin/dsh-sim"),
            Path::new("/s.json"),
            Path::new("/j"),
        )
        .apply(&options, &mut config);
        assert_eq!(config.confinement, antigravity_acp::ConfinementMode::Off);
        let read: Vec<PathBuf> = ["/bin/dsh-sim", "/s.json", "/r"].map(PathBuf::from).into();
        assert_eq!(config.extra_read_paths, read);
        let write: Vec<PathBuf> = ["/j", "/w"].map(PathBuf::from).into();
        assert_eq!(config.extra_write_paths, write);
    }

    #[test]
    fn a_relayed_programs_directories_are_where_it_is_found_and_where_it_really_is() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        let links = root.path().join("links");
        std::fs::create_dir_all(&real).unwrap();
        std::fs::create_dir_all(&links).unwrap();
        std::fs::write(real.join("server"), "").unwrap();
        let named = program_dirs(&real.join("server"));
        assert_eq!(named.first(), Some(&real));
        assert!(named.contains(&std::fs::canonicalize(&real).unwrap()));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(real.join("server"), links.join("server")).unwrap();
            let dirs = program_dirs(&links.join("server"));
            assert_eq!(dirs, [links, std::fs::canonicalize(&real).unwrap()]);
        }
        assert!(program_dirs(Path::new("no-such-program-anywhere-here")).is_empty());
        // A relative path with a folder in it is taken from here, not looked up on PATH.
        let here = std::path::absolute("src").unwrap();
        assert_eq!(program_dirs(Path::new("src/lib.rs")).first(), Some(&here));
    }

    #[test]
    fn a_relayed_command_reads_its_programs_folders_and_writes_the_journal() {
        let program = std::path::absolute("src/lib.rs").unwrap();
        let command = ServerCommand {
            program: program.clone(),
            args: Vec::new(),
            env: Vec::new(),
        };
        let paths = RunnerPaths::relayed(&command, Path::new("/j"));
        assert_eq!(paths.read, program_dirs(&program));
        assert!(!paths.read.is_empty());
        assert_eq!(paths.write, [PathBuf::from("/j")]);
    }
}
