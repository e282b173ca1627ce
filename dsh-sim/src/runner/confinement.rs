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
            read: antigravity_acp::server::confine::allowlist::program_dirs(&command.program, &[]),
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

#[cfg(test)]
mod tests {
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
}
