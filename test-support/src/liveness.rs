//! Whether a process is alive, asked portably and without `/proc`, so the check holds
//! on every system the project runs on (where a `/proc` reader would call every process
//! dead and a leak check would pass falsely):
//! - on Unix, `kill(pid, 0)` through nix, which checks existence and permission without
//!   sending a signal;
//! - on Windows, `OpenProcess` and a zero-time wait on the handle: the process object
//!   exists while it runs or while anyone still holds a handle to it (Windows' zombie),
//!   and the wait tells the two apart.

/// Whether process `pid` exists.
///
/// A zombie (exited, not yet reaped by its parent; on Windows, exited while a handle to
/// it is still open) still exists, so it counts as live until it is reaped: `kill`
/// reports `ESRCH`, and `OpenProcess` fails, only once the parent has waited for it (or
/// closed its handle). The adapter reaps every server it starts, so a server that
/// outlived its turn's teardown is a leak even as a zombie. A process of another user
/// (`EPERM`, `ERROR_ACCESS_DENIED`) counts as live. A pid that no process can have (0,
/// or on Unix beyond `i32::MAX`, which `kill` would read as a process group) is not live.
pub fn process_is_live(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    system::exists(pid)
}

/// Whether process `pid` still runs: it exists and is not a zombie. For processes the
/// caller did not start itself (a server's children, reparented when the server died),
/// reaping is up to whatever adopted them (in a container, a PID 1 that may never reap),
/// so a zombie there has already released everything but its pid. On Unix without
/// `/proc`, a zombie cannot be told apart and counts as running (the strict answer).
pub fn process_is_running(pid: u32) -> bool {
    process_is_live(pid) && !system::is_zombie(pid)
}

#[cfg(unix)]
mod system {
    use nix::errno::Errno;
    use nix::sys::signal::kill;
    use nix::unistd::Pid;

    pub(super) fn exists(pid: u32) -> bool {
        let Ok(raw) = i32::try_from(pid) else {
            return false;
        };
        match kill(Pid::from_raw(raw), None) {
            Ok(()) => true,
            Err(Errno::ESRCH) => false,
            Err(_) => true,
        }
    }

    pub(super) fn is_zombie(pid: u32) -> bool {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // `pid (comm) S ...`: the state follows the last `)` (comm may hold spaces or `)`).
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            == Some("Z")
    }
}

#[cfg(windows)]
#[allow(unsafe_code)]
mod system {
    use windows_sys::Win32::Foundation::{
        CloseHandle, ERROR_ACCESS_DENIED, GetLastError, HANDLE, WAIT_TIMEOUT,
    };
    use windows_sys::Win32::System::Threading::{
        OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE, WaitForSingleObject,
    };

    /// What `OpenProcess` says of `pid`.
    enum Opened {
        /// A handle to the process object, closed on drop.
        Handle(HANDLE),
        /// The process exists, but this user may not open it.
        Denied,
        /// No such process object.
        Gone,
    }

    impl Drop for Opened {
        fn drop(&mut self) {
            if let Self::Handle(handle) = *self {
                // SAFETY: the handle came from `OpenProcess` and is closed exactly once.
                unsafe { CloseHandle(handle) };
            }
        }
    }

    fn open(pid: u32) -> Opened {
        // SAFETY: `OpenProcess` takes plain values and returns a handle or null.
        let handle = unsafe {
            OpenProcess(
                PROCESS_SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION,
                0,
                pid,
            )
        };
        if !handle.is_null() {
            return Opened::Handle(handle);
        }
        // SAFETY: reads this thread's last error, set by the failed call just above.
        if unsafe { GetLastError() } == ERROR_ACCESS_DENIED {
            Opened::Denied
        } else {
            Opened::Gone
        }
    }

    pub(super) fn exists(pid: u32) -> bool {
        !matches!(open(pid), Opened::Gone)
    }

    pub(super) fn is_zombie(pid: u32) -> bool {
        match open(pid) {
            // SAFETY: a valid process handle, waited on for zero milliseconds.
            Opened::Handle(handle) => (unsafe { WaitForSingleObject(handle, 0) }) != WAIT_TIMEOUT,
            Opened::Denied | Opened::Gone => false,
        }
    }
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
        while !system::is_zombie(pid) {
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

    /// Waits, bounded, until `pid` is no longer live. At once on Linux and Windows; Wine's
    /// server lets a process object go some 0.5 s after its last handle closed.
    fn gone_within_bound(pid: u32) -> crate::TestResult {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while process_is_live(pid) {
            if std::time::Instant::now() >= deadline {
                return Err(format!("process {pid} is still live 10 s after it was reaped").into());
            }
            std::thread::yield_now();
        }
        Ok(())
    }

    /// A short-lived child of this process: `true` on Unix, `cmd /c exit` on Windows.
    fn short_lived_child() -> std::io::Result<std::process::Child> {
        if cfg!(windows) {
            std::process::Command::new("cmd")
                .args(["/c", "exit"])
                .spawn()
        } else {
            std::process::Command::new("true").spawn()
        }
    }

    #[test]
    fn a_reaped_child_is_not_live() -> crate::TestResult {
        let mut child = short_lived_child()?;
        let pid = child.id();
        child.wait()?;
        // On Windows the child's handle is what keeps an exited process: reaping is
        // waiting and closing it.
        drop(child);
        gone_within_bound(pid)
    }

    /// On Windows the zombie is the exited process whose handle is still open: live, not
    /// running, and gone once the handle is closed (`Child::wait` keeps it; dropping the
    /// child closes it).
    #[cfg(windows)]
    #[test]
    fn an_exited_child_whose_handle_is_open_is_live_but_not_running() -> crate::TestResult {
        let mut child = short_lived_child()?;
        let pid = child.id();
        child.wait()?;
        assert!(
            process_is_live(pid),
            "the open handle keeps the process object"
        );
        assert!(!process_is_running(pid), "it has exited");
        drop(child);
        gone_within_bound(pid)
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_zombie_counts_as_live_until_reaped() -> crate::TestResult {
        use nix::sys::wait::{Id, WaitPidFlag, waitid};
        use nix::unistd::Pid;
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
