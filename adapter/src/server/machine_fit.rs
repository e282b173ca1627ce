//! What is known to keep Google's server (1.3.0) from starting on this machine, so that a
//! server that dies before it answers names the likely cause instead of leaving the user
//! to hunt (README "Platforms"):
//!
//! - on x86, the server needs AVX;
//! - on arm64 Linux, its allocator (TCMalloc) fails on 16 KiB (or larger) pages and on
//!   39-bit address spaces;
//! - on Windows, it can exit with code 4294967295 at session start, and enterprise policy
//!   can block the DLLs it unpacks into its temp folder (`_MEI*`), which the adapter
//!   points at the server's private scratch (`scratchRoot`).
//!
//! The facts are read only when a start has already failed; nothing here runs on a
//! healthy start.

/// What the hints depend on, read from this machine ([`MachineFacts::here`]) or written
/// out by a test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MachineFacts {
    /// `std::env::consts::OS`.
    pub(crate) os: &'static str,
    /// `std::env::consts::ARCH`.
    pub(crate) arch: &'static str,
    /// Whether the CPU has AVX (`None`: not x86, or not known).
    pub(crate) avx: Option<bool>,
    /// The memory page size in bytes (`None`: not known).
    pub(crate) page_size: Option<u64>,
    /// An address on this thread's stack: below 2^39 on a 39-bit address space.
    pub(crate) stack_address: u64,
}

/// The highest user address of a 39-bit address space.
const ADDRESS_SPACE_39_BITS: u64 = 1 << 39;

impl MachineFacts {
    /// The facts of this machine.
    pub(crate) fn here() -> Self {
        let marker = 0u8;
        Self {
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
            avx: avx(),
            page_size: page_size(),
            stack_address: std::ptr::addr_of!(marker) as usize as u64,
        }
    }

    /// What is known to stop the server at start on this machine, each as a clause of
    /// the error's message (empty: nothing known).
    pub(crate) fn start_hints(&self) -> Vec<String> {
        let mut hints = Vec::new();
        if self.avx == Some(false) {
            hints.push("this CPU lacks AVX, which Google's server needs".to_owned());
        }
        if self.arch == "aarch64" && self.os == "linux" {
            if let Some(size) = self.page_size.filter(|size| *size > 4096) {
                hints.push(format!(
                    "this kernel uses {} KiB memory pages, on which Google's server is known \
                     to fail (it needs 4 KiB pages)",
                    size / 1024
                ));
            }
            if self.stack_address < ADDRESS_SPACE_39_BITS {
                hints.push(
                    "this kernel has a 39-bit address space, on which Google's server is \
                     known to fail"
                        .to_owned(),
                );
            }
        }
        if self.os == "windows" {
            hints.push(
                "on Windows 1.3.0 is known to exit (code 4294967295) at session start, and \
                 policy can block the DLLs it unpacks into its temp folder, which is inside \
                 the scratch root: set `scratchRoot` to a folder programs may run from"
                    .to_owned(),
            );
        }
        hints
    }
}

/// The message clause for a server connection that closed during `method`: the hints of
/// this machine when the server ended before it was ready (`initialize`, `session/new`),
/// else nothing.
pub(crate) fn closed_during(method: &str) -> String {
    if !matches!(method, "initialize" | "session/new") {
        return String::new();
    }
    let hints = MachineFacts::here().start_hints();
    if hints.is_empty() {
        String::new()
    } else {
        format!(" (known on this machine: {})", hints.join("; "))
    }
}

#[cfg(target_arch = "x86_64")]
fn avx() -> Option<bool> {
    Some(std::arch::is_x86_feature_detected!("avx"))
}

#[cfg(not(target_arch = "x86_64"))]
fn avx() -> Option<bool> {
    None
}

/// The page size, from the kernel's own account of this process's first mapping.
#[cfg(target_os = "linux")]
fn page_size() -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let line = smaps
        .lines()
        .find_map(|line| line.strip_prefix("KernelPageSize:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kib * 1024)
}

#[cfg(not(target_os = "linux"))]
fn page_size() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linux_x64() -> MachineFacts {
        MachineFacts {
            os: "linux",
            arch: "x86_64",
            avx: Some(true),
            page_size: Some(4096),
            stack_address: 0x7ffd_0000_0000,
        }
    }

    #[test]
    fn a_machine_that_fits_gets_no_hint() {
        assert!(linux_x64().start_hints().is_empty());
        let arm = MachineFacts {
            arch: "aarch64",
            avx: None,
            stack_address: 0xffff_c000_0000,
            ..linux_x64()
        };
        assert!(arm.start_hints().is_empty());
    }

    #[test]
    fn a_cpu_without_avx_is_named() {
        let old = MachineFacts {
            avx: Some(false),
            ..linux_x64()
        };
        assert_eq!(
            old.start_hints(),
            ["this CPU lacks AVX, which Google's server needs"]
        );
    }

    #[test]
    fn arm64_pages_and_address_space_are_named() {
        let arm = MachineFacts {
            arch: "aarch64",
            avx: None,
            page_size: Some(16 * 1024),
            stack_address: 0x7f_f000_0000,
            ..linux_x64()
        };
        let hints = arm.start_hints();
        assert_eq!(hints.len(), 2, "{hints:?}");
        assert!(hints[0].contains("16 KiB memory pages"), "{hints:?}");
        assert!(hints[1].contains("39-bit address space"), "{hints:?}");
        // Only arm64 Linux: the same facts on x86 say nothing of pages.
        let x86 = MachineFacts {
            page_size: Some(16 * 1024),
            stack_address: 0x7f_f000_0000,
            ..linux_x64()
        };
        assert!(x86.start_hints().is_empty());
    }

    #[test]
    fn windows_names_its_known_start_failure_and_the_scratch_root() {
        let windows = MachineFacts {
            os: "windows",
            page_size: None,
            ..linux_x64()
        };
        let hints = windows.start_hints();
        assert_eq!(hints.len(), 1);
        assert!(hints[0].contains("4294967295"), "{hints:?}");
        assert!(hints[0].contains("scratchRoot"), "{hints:?}");
    }

    #[test]
    fn only_a_start_that_failed_gets_hints() {
        assert_eq!(closed_during("session/prompt"), "");
        assert_eq!(closed_during("session/close"), "");
    }

    #[test]
    fn this_machine_reads_its_own_facts() {
        let here = MachineFacts::here();
        assert_eq!(here.os, std::env::consts::OS);
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            assert!(here.page_size.is_some_and(|size| size >= 4096));
        }
        if cfg!(target_arch = "x86_64") {
            assert!(here.avx.is_some());
        }
    }
}
