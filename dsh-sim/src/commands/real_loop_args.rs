//! `dsh-sim run --real-loop`: the options that drive each scenario's chat through DSH's
//! own agent loop in Node (`dsh-plugin/real-loop/driver.mjs`) instead of dsh-sim's.

use std::path::PathBuf;

use crate::runner::options::RealLoopHost;

/// The `run` options of the real-loop host.
#[derive(Debug, clap::Args)]
pub(crate) struct RealLoopArgs {
    /// Drive each chat through DSH's own agent loop (`@deepseek-ai/dsh-agent-loop` in
    /// Node, with the DSH plugin mounted) instead of dsh-sim's; the same fake, checks and
    /// judges. Scenarios marked `simulator_only` are skipped. Needs `npm --prefix
    /// dsh-plugin ci` and the plugin's addon (`npm --prefix dsh-plugin run build:debug`).
    #[arg(long)]
    pub(crate) real_loop: bool,
    /// The Node binary for `--real-loop`.
    #[arg(long, value_name = "PATH", default_value = "node")]
    pub(crate) node: PathBuf,
    /// The driver for `--real-loop` (default: this checkout's
    /// `dsh-plugin/real-loop/driver.mjs`).
    #[arg(long, value_name = "FILE")]
    pub(crate) real_loop_driver: Option<PathBuf>,
}

impl RealLoopArgs {
    /// The runner's real-loop host, when `--real-loop` is given.
    pub(crate) fn host(&self) -> Option<RealLoopHost> {
        if !self.real_loop {
            return None;
        }
        let mut host = RealLoopHost::of_this_checkout(self.node.clone());
        if let Some(driver) = &self.real_loop_driver {
            host.driver.clone_from(driver);
        }
        Some(host)
    }
}
