//! The two abrupt acts of the server faults that need the system: the fake killing
//! itself at once (no exit code of its own, no flush, no `Exited` journal entry), and
//! closing its stdout for good while it goes on running.
//! - Unix: `SIGKILL` to itself; fd 1 pointed at `/dev/null` (nothing reuses the number).
//! - Windows: `TerminateProcess` on itself (exit code 1, as a kill from outside gives);
//!   the standard output handle closed and replaced by none.

/// Ends this process now, as a kill from outside would. Returns only when the system
/// refused, with the reason.
pub fn kill_self() -> String {
    #[cfg(unix)]
    {
        match nix::sys::signal::kill(nix::unistd::Pid::this(), nix::sys::signal::Signal::SIGKILL) {
            Ok(()) => "SIGKILL was sent but did not end the process".to_owned(),
            Err(errno) => format!("cannot SIGKILL itself: {errno}"),
        }
    }
    #[cfg(windows)]
    {
        windows::terminate_self()
    }
}

/// Closes every copy of stdout's write end this process holds at the system level (the
/// async writer must be dropped by the caller). Returns the reason when it could not.
pub fn close_stdout() -> Result<(), String> {
    #[cfg(unix)]
    {
        let null = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .map_err(|e| format!("cannot open /dev/null: {e}"))?;
        nix::unistd::dup2_stdout(null).map_err(|errno| format!("cannot close stdout: {errno}"))
    }
    #[cfg(windows)]
    {
        windows::close_stdout()
    }
}

#[cfg(windows)]
#[allow(unsafe_code)]
mod windows {
    use windows_sys::Win32::Foundation::{CloseHandle, GetLastError};
    use windows_sys::Win32::System::Console::{GetStdHandle, STD_OUTPUT_HANDLE, SetStdHandle};
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, TerminateProcess};

    pub(super) fn terminate_self() -> String {
        // SAFETY: the pseudo-handle of this process; TerminateProcess takes plain values.
        unsafe { TerminateProcess(GetCurrentProcess(), 1) };
        // SAFETY: reads this thread's last error, set by the failed call above.
        format!("cannot terminate itself: error {}", unsafe {
            GetLastError()
        })
    }

    pub(super) fn close_stdout() -> Result<(), String> {
        // SAFETY: the standard handle is read, replaced by null (writes to a null standard
        // handle are dropped by Rust's std), then the old one closed exactly once.
        unsafe {
            let handle = GetStdHandle(STD_OUTPUT_HANDLE);
            if handle.is_null() || SetStdHandle(STD_OUTPUT_HANDLE, std::ptr::null_mut()) == 0 {
                return Err(format!("cannot replace stdout: error {}", GetLastError()));
            }
            if CloseHandle(handle) == 0 {
                return Err(format!("cannot close stdout: error {}", GetLastError()));
            }
        }
        Ok(())
    }
}
