//! The leak check, judged from outside the adapter once it is disposed: every server
//! process that started is gone, every scratch cwd a server reported is removed, every
//! bridge URL the server was given refuses connections, and the scratch root is empty.

use std::path::Path;
use std::time::Duration;

use crate::runner::wire::ProcessFacts;

/// How long a loopback connection attempt may take before it counts as not refused.
const CONNECT_BOUND: Duration = Duration::from_secs(2);

/// Every leak found, as readable sentences.
pub async fn find_leaks(
    processes: &[ProcessFacts],
    bridge_urls: &[String],
    scratch_root: &Path,
) -> Vec<String> {
    let mut leaks = Vec::new();
    for (n, process) in processes.iter().enumerate() {
        match process.pid {
            Some(pid) if process_is_live(pid) => {
                leaks.push(format!("server process {pid} is still running"));
            }
            Some(_) => {}
            // A journal without its start record: the process cannot be checked, which
            // must not pass as "gone".
            None => leaks.push(format!(
                "server journal {} has no start record, so whether its process is gone \
                 cannot be checked",
                n + 1
            )),
        }
        if let Some(cwd) = &process.cwd
            && Path::new(cwd).exists()
        {
            leaks.push(format!("server scratch cwd {cwd} still exists"));
        }
    }
    for url in bridge_urls {
        if let Some(leak) = bridge_still_open(url).await {
            leaks.push(leak);
        }
    }
    match std::fs::read_dir(scratch_root) {
        Ok(entries) => {
            let left: Vec<String> = entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            if !left.is_empty() {
                leaks.push(format!(
                    "the scratch root {} still holds {left:?}",
                    scratch_root.display()
                ));
            }
        }
        Err(error) => leaks.push(format!(
            "cannot read the scratch root {}: {error}",
            scratch_root.display()
        )),
    }
    leaks
}

/// Whether a process exists, checked portably with `kill(pid, 0)` (no `/proc`). The
/// adapter reaps every server it starts, so an unreaped zombie counts as a leak too.
pub use test_support::{process_is_live, process_is_running};

/// `Some(leak)` when something still accepts connections at the bridge's address.
pub(crate) async fn bridge_still_open(url: &str) -> Option<String> {
    let authority = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())?;
    match tokio::time::timeout(CONNECT_BOUND, tokio::net::TcpStream::connect(authority)).await {
        Ok(Ok(_)) => Some(format!("bridge {authority} still accepts connections")),
        Ok(Err(_)) => None,
        Err(_) => Some(format!(
            "bridge {authority} neither accepted nor refused within {CONNECT_BOUND:?}"
        )),
    }
}
