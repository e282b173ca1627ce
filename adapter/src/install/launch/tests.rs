//! The launch command's rules, one refusal each, and the two spellings that are accepted.

use super::*;

const SERVER: &str = "agy_acp_server.par";

/// The refusal's message, or a failure when the command was accepted.
fn refusal(cmd: &str) -> Result<String, String> {
    match launch_member(cmd, SERVER) {
        Err(InstallError::BadLaunchCommand(why)) => Ok(why),
        other => Err(format!(
            "`{cmd}` was not refused as a bad command: {other:?}"
        )),
    }
}

#[test]
fn the_server_member_at_the_root_is_accepted_with_or_without_dot_slash() -> crate::TestResult {
    assert_eq!(launch_member("./agy_acp_server.par", SERVER)?, SERVER);
    assert_eq!(launch_member("agy_acp_server.par", SERVER)?, SERVER);
    Ok(())
}

#[test]
fn a_path_that_climbs_out_is_refused() -> crate::TestResult {
    for cmd in [
        "../x",
        "./../agy_acp_server.par",
        "runtime/../agy_acp_server.par",
        "..",
    ] {
        let why = refusal(cmd)?;
        assert!(why.contains("climbs out"), "{cmd}: {why}");
    }
    Ok(())
}

#[test]
fn an_absolute_path_is_refused() -> crate::TestResult {
    for cmd in [
        "/bin/sh",
        "/agy_acp_server.par",
        "\\agy_acp_server.par",
        "C:agy_acp_server.par",
    ] {
        let why = refusal(cmd)?;
        assert!(why.contains("absolute"), "{cmd}: {why}");
    }
    Ok(())
}

#[test]
fn a_backslash_is_refused() -> crate::TestResult {
    let why = refusal("runtime\\agy_acp_server.par")?;
    assert!(why.contains("backslash"), "{why}");
    Ok(())
}

#[test]
fn empty_and_dot_components_are_refused() -> crate::TestResult {
    for cmd in [
        "",
        "./",
        "sub//agy_acp_server.par",
        "././agy_acp_server.par",
        ".",
    ] {
        let why = refusal(cmd)?;
        assert!(
            why.contains("empty or `.`") || why.contains("names no file"),
            "{cmd}: {why}"
        );
    }
    assert!(refusal("./")?.contains("names no file"));
    assert!(refusal("sub//x")?.contains("empty or `.`"));
    Ok(())
}

/// The registry format allows nesting, but no nested path is the pinned archive's server:
/// a nested file, even one the archive holds and the receipt verifies, is not launched.
#[test]
fn a_nested_path_or_another_member_is_not_the_server() -> crate::TestResult {
    for cmd in [
        "sub/x",
        "./sub/agy_acp_server.par",
        "runtime/certs.pem",
        "localharness_external",
        "agy_acp_server.par.sh",
    ] {
        let why = refusal(cmd)?;
        assert!(
            why.contains("not the archive's server member"),
            "{cmd}: {why}"
        );
    }
    Ok(())
}

#[test]
fn a_long_command_is_shown_cut() -> crate::TestResult {
    let long = format!("../{}", "a".repeat(500));
    let why = refusal(&long)?;
    assert!(why.len() < 220, "{why}");
    Ok(())
}
