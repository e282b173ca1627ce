//! Landlock itself (Linux): which ABI the kernel offers, the ruleset of a launch, built
//! in the adapter with the `landlock` crate, and the one `pre_exec` that makes the child
//! restrict itself with it before it execs the server.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::OnceLock;

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, RestrictSelf, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};
use tokio::process::Command;

use super::allowlist::{Rights, Rule};
use crate::error::AdapterError;

/// The Landlock ABI the running kernel offers (0: none). Asked once: it cannot change
/// while the process runs.
pub(super) fn abi() -> u8 {
    static KERNEL: OnceLock<u8> = OnceLock::new();
    *KERNEL.get_or_init(|| {
        // Without flags and without `no_new_privs`, `apply` only reads the kernel's
        // Landlock version (`landlock_create_ruleset` with the version flag): it restricts
        // nothing.
        match RestrictSelf::default().no_new_privs(false).apply() {
            Ok(status) => number(ABI::from(status.landlock)),
            Err(_) => 0,
        }
    })
}

fn number(abi: ABI) -> u8 {
    match abi {
        ABI::Unsupported => 0,
        ABI::V1 => 1,
        ABI::V2 => 2,
        ABI::V3 => 3,
        ABI::V4 => 4,
        ABI::V5 => 5,
        ABI::V6 => 6,
        ABI::V7 => 7,
        _ => 8,
    }
}

/// The `landlock` ABI of a level this adapter plans (at most `TARGET_ABI`, 7).
fn of_number(level: u8) -> ABI {
    match level {
        0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        _ => ABI::V7,
    }
}

/// The rights of `rights` at `abi`.
fn access(rights: Rights, abi: ABI) -> BitFlags<AccessFs> {
    let handled = AccessFs::from_all(abi);
    match rights {
        Rights::ReadExecute => AccessFs::from_read(abi),
        Rights::ReadWrite => handled,
        Rights::Device => {
            handled
                & (AccessFs::ReadFile
                    | AccessFs::WriteFile
                    | AccessFs::Truncate
                    | AccessFs::IoctlDev)
        }
        Rights::ReadOnlyDevice => handled & AccessFs::ReadFile,
    }
}

/// Creates the ruleset of `rules` for Landlock ABI `level`: every filesystem right the
/// ABI knows is handled (so whatever no rule grants is refused) and, from ABI 6 on,
/// signals and abstract unix sockets are scoped to the domain. The kernel must support
/// all of it (`HardRequirement`), so the level reported is the level enforced.
pub(super) fn build(level: u8, rules: &[Rule]) -> Result<OwnedFd, AdapterError> {
    let abi = of_number(level);
    let refused = |_| AdapterError::ConfinementFailed("the kernel refused the ruleset");
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .map_err(refused)?;
    if abi >= ABI::V6 {
        ruleset = ruleset
            .scope(Scope::Signal | Scope::AbstractUnixSocket)
            .map_err(refused)?;
    }
    let mut created = ruleset.create().map_err(refused)?;
    for rights in [
        Rights::ReadExecute,
        Rights::ReadWrite,
        Rights::Device,
        Rights::ReadOnlyDevice,
    ] {
        let paths = rules.iter().filter(|r| r.rights == rights).map(|r| &r.path);
        // Paths that do not exist are skipped; a file gets only the file rights.
        created = created
            .add_rules(path_beneath_rules(paths, access(rights, abi)))
            .map_err(|_| AdapterError::ConfinementFailed("a path rule was refused"))?;
    }
    Option::<OwnedFd>::from(created).ok_or(AdapterError::ConfinementFailed(
        "the kernel made no ruleset",
    ))
}

/// Makes `command`'s child, between fork and exec, set `no_new_privs` and restrict
/// itself with `ruleset`. The ruleset descriptor is close-on-exec, so the server never
/// holds it; the caller keeps it open until the spawn returned.
pub(super) fn restrict_on_exec(command: &mut Command, ruleset: &OwnedFd) {
    let fd = libc::c_long::from(ruleset.as_raw_fd());
    let (no_new_privs, zero, flags): (libc::c_ulong, libc::c_ulong, libc::c_long) = (1, 0, 0);
    // SAFETY: `pre_exec` runs the closure in the forked child of a multi-threaded
    // process, before exec, where only async-signal-safe functions may be called. The
    // closure makes two raw system calls (`prctl(PR_SET_NO_NEW_PRIVS)` and
    // `landlock_restrict_self`, through libc's plain wrappers) and reads `errno`: it
    // allocates nothing (`io::Error::last_os_error` keeps the errno inline), takes no
    // lock, logs nothing and touches no memory but its own stack and the copied integers.
    // The descriptor `fd` stays valid in the child: the caller keeps the ruleset open until
    // the spawn returned, and it is close-on-exec, so the server never holds it.
    #[allow(
        unsafe_code,
        reason = "two raw syscalls in the child before exec: the only way to confine the \
                  server without shipping a launcher binary; audited in the comment above"
    )]
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, no_new_privs, zero, zero, zero) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, fd, flags) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_abis_map_both_ways() {
        for level in 0..=7 {
            assert_eq!(number(of_number(level)), level);
        }
    }

    #[test]
    fn devices_never_get_more_than_file_rights() {
        let abi = ABI::V7;
        assert!(!access(Rights::Device, abi).contains(AccessFs::Execute));
        assert!(!access(Rights::Device, abi).contains(AccessFs::MakeReg));
        assert!(access(Rights::Device, abi).contains(AccessFs::Truncate));
        assert_eq!(
            access(Rights::ReadOnlyDevice, abi),
            BitFlags::from(AccessFs::ReadFile)
        );
        // Rights an ABI does not know are never asked for.
        assert!(!access(Rights::Device, ABI::V2).contains(AccessFs::Truncate));
        assert!(!access(Rights::ReadWrite, ABI::V4).contains(AccessFs::IoctlDev));
    }
}
