//! Whether a process is alive, asked portably: `kill(pid, 0)` through nix, which checks
//! existence and permission without sending a signal. No `/proc` is read, so the check
//! also holds on systems without it (where a `/proc` reader would call every process
//! dead and a leak check would pass falsely).

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

/// Whether process `pid` exists.
///
/// A zombie (exited, not yet reaped by its parent) still exists, so it counts as live
/// until it is reaped: `kill` reports `ESRCH` only once the parent has waited for it. The
/// adapter reaps every server it starts, so a server that outlived its turn's teardown is
/// a leak even as a zombie. A process of another user (`EPERM`) counts as live. A pid
/// that no process can have (0, or beyond `i32::MAX`, which `kill` would read as a
/// process group) is not live.
pub fn process_is_live(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    if raw <= 0 {
        return false;
    }
    match kill(Pid::from_raw(raw), None) {
        Ok(()) => true,
        Err(Errno::ESRCH) => false,
        Err(_) => true,
    }
}

/// Whether process `pid` still runs: it exists and is not a zombie. For processes the
/// caller did not start itself (a server's children, reparented when the server died),
/// reaping is up to whatever adopted them (in a container, a PID 1 that may never reap),
/// so a zombie there has already released everything but its pid. Where `/proc` is
/// missing, a zombie cannot be told apart and counts as running (the strict answer).
pub fn process_is_running(pid: u32) -> bool {
    process_is_live(pid) && !is_zombie(pid)
}

fn is_zombie(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (comm) S ...`: the state follows the last `)` (comm may hold spaces or `)`).
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        == Some("Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_live() {
        assert!(process_is_live(std::process::id()));
    }

    #[test]
    fn this_process_is_running() {
        assert!(process_is_running(std::process::id()));
    }

    /// An exited child not yet waited for is a zombie: live, but not running.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_unreaped_child_is_live_but_not_running() -> crate::TestResult {
        let mut child = std::process::Command::new("true").spawn()?;
        let pid = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !is_zombie(pid) {
            assert!(
                std::time::Instant::now() < deadline,
                "the child never exited"
            );
            std::thread::yield_now();
        }
        assert!(process_is_live(pid));
        assert!(!process_is_running(pid));
        child.wait()?;
        Ok(())
    }

    #[test]
    fn pids_no_process_can_have_are_not_live() {
        assert!(!process_is_live(0));
        assert!(!process_is_live(u32::MAX));
    }

    #[test]
    fn a_reaped_child_is_not_live() -> crate::TestResult {
        let mut child = std::process::Command::new("true").spawn()?;
        let pid = child.id();
        child.wait()?;
        assert!(!process_is_live(pid));
        Ok(())
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_zombie_counts_as_live_until_reaped() -> crate::TestResult {
        use nix::sys::wait::{Id, WaitPidFlag, waitid};
        let mut child = std::process::Command::new("true").spawn()?;
        let pid = child.id();
        // Waits for the exit without reaping: the child is now a zombie.
        waitid(
            Id::Pid(Pid::from_raw(i32::try_from(pid)?)),
            WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT,
        )?;
        assert!(process_is_live(pid), "a zombie counts as live");
        child.wait()?;
        assert!(!process_is_live(pid), "a reaped child is gone");
        Ok(())
    }
}
