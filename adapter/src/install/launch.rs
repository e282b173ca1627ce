//! The agent index's launch command (`cmd`), checked before anything is fetched: the
//! digest pins the archive, not the index entry's `cmd`, so a hostile agent index could
//! otherwise point the launch outside the verified install. The only command accepted is
//! the archive's server member at the install's root (`agy_acp_server.par`, or
//! `./agy_acp_server.par`); the registry format allows nested paths, but the pinned 1.3.0
//! archives hold their server at the root, so a nested, absolute or `..` path can never
//! name the verified server. Each refusal says which rule it broke.

use super::error::InstallError;

/// The agent index's `cmd` as the server member's name, or why it cannot be launched.
pub(crate) fn launch_member(cmd: &str, server: &str) -> Result<String, InstallError> {
    let shown: String = cmd.chars().take(120).collect();
    let refuse = |why: &str| Err(InstallError::BadLaunchCommand(format!("`{shown}` {why}")));
    let name = cmd.strip_prefix("./").unwrap_or(cmd);
    if name.is_empty() {
        return refuse("names no file");
    }
    let bytes = name.as_bytes();
    let drive_letter = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if name.starts_with('/') || name.starts_with('\\') || drive_letter {
        return refuse("is an absolute path; the launch must stay inside the verified install");
    }
    if name.contains('\\') {
        return refuse("holds a backslash; the registry's paths are `/`-separated");
    }
    let components: Vec<&str> = name.split('/').collect();
    if components.contains(&"..") {
        return refuse("climbs out of the install with `..`");
    }
    if components.iter().any(|c| c.is_empty() || *c == ".") {
        return refuse("has an empty or `.` path component");
    }
    if name != server {
        return refuse(&format!(
            "is not the archive's server member `{server}` (the only file the launch may name)"
        ));
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests;
