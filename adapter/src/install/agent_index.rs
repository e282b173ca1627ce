//! Reading the agent index: the document the installer downloads from, in the public ACP
//! registry's format (what users configure as `registry`): a single agent entry, or the
//! aggregated index `{"version", "agents": [...]}`. Picks `antigravity-acp` at the pinned
//! version and this machine's platform, and returns its binary target (`archive`, `cmd`,
//! `args`, `env`, optional `sha256`). A missing or malformed part is an error naming it.

use std::collections::BTreeMap;

use serde_json::Value;

use super::error::InstallError;
use super::platform::{AGENT_ID, PINNED_VERSION, parse_digest};

/// The ACP registry's published 1.3.0 entry, compiled in: the default agent index, so a
/// pinned adapter never depends on where the registry's `latest` has moved.
pub const BUILTIN_ENTRY: &str = include_str!("antigravity-acp-1.3.0.agent.json");

/// One platform's binary distribution, as the agent index describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryTarget {
    /// The archive's URL.
    pub archive: String,
    /// The command to run, relative to the extracted archive (`./agy_acp_server.par`).
    pub cmd: String,
    /// Its arguments (`--uid=` on Linux).
    pub args: Vec<String>,
    /// Variables the entry asks to set.
    pub env: BTreeMap<String, String>,
    /// The archive's SHA-256, when the agent index gives one.
    pub sha256: Option<String>,
}

/// Finds the pinned `antigravity-acp` binary for `platform` in an agent index document.
pub fn select_target(document: &str, platform: &str) -> Result<BinaryTarget, InstallError> {
    let value: Value = serde_json::from_str(document)
        .map_err(|e| InstallError::AgentIndexMalformed(format!("not JSON ({e})")))?;
    let entry = find_entry(&value)?;
    let version = entry
        .get("version")
        .and_then(Value::as_str)
        .ok_or_else(|| missing("the entry's `version`"))?;
    if version != PINNED_VERSION {
        return Err(InstallError::VersionMismatch {
            found: version.chars().take(40).collect(),
            pinned: PINNED_VERSION,
        });
    }
    let binaries = entry
        .get("distribution")
        .and_then(|d| d.get("binary"))
        .and_then(Value::as_object)
        .ok_or_else(|| missing("`distribution.binary`"))?;
    let target = binaries
        .get(platform)
        .ok_or_else(|| InstallError::PlatformMissing(platform.to_owned()))?;
    parse_target(target, platform)
}

fn missing(what: &str) -> InstallError {
    InstallError::AgentIndexMalformed(format!("{what} is missing or of the wrong type"))
}

/// The `antigravity-acp` entry: the document itself, or one of an index's `agents`.
fn find_entry(value: &Value) -> Result<&Value, InstallError> {
    if let Some(agents) = value.get("agents") {
        let agents = agents.as_array().ok_or_else(|| missing("`agents`"))?;
        return agents
            .iter()
            .find(|a| a.get("id").and_then(Value::as_str) == Some(AGENT_ID))
            .ok_or(InstallError::AgentMissing);
    }
    match value.get("id").and_then(Value::as_str) {
        Some(AGENT_ID) => Ok(value),
        Some(_) => Err(InstallError::AgentMissing),
        None => Err(missing("`id` (or `agents`)")),
    }
}

fn parse_target(target: &Value, platform: &str) -> Result<BinaryTarget, InstallError> {
    let field = |name: &str| format!("`distribution.binary.{platform}.{name}`");
    let text = |name: &str| -> Result<String, InstallError> {
        target
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| missing(&field(name)))
    };
    let archive = text("archive")?;
    let cmd = text("cmd")?;
    let args = match target.get("args") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| a.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| missing(&field("args[]")))?,
        Some(_) => return Err(missing(&field("args"))),
    };
    let env = match target.get("env") {
        None => BTreeMap::new(),
        Some(Value::Object(vars)) => vars
            .iter()
            .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
            .collect::<Option<BTreeMap<_, _>>>()
            .ok_or_else(|| missing(&field("env.*")))?,
        Some(_) => return Err(missing(&field("env"))),
    };
    let sha256 = match target.get("sha256") {
        None => None,
        Some(Value::String(digest)) => Some(parse_digest(digest).map_err(|_| {
            InstallError::AgentIndexMalformed(format!("{} is not 64 hex digits", field("sha256")))
        })?),
        Some(_) => return Err(missing(&field("sha256"))),
    };
    Ok(BinaryTarget {
        archive,
        cmd,
        args,
        env,
        sha256,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_entry_is_the_published_one() -> crate::TestResult {
        let target = select_target(BUILTIN_ENTRY, "linux-x86_64")?;
        assert_eq!(
            target.archive,
            "https://dl.google.com/agy-extensions/releases/linux/agy-acp-server-1.3.0-linux-x86_64.zip"
        );
        assert_eq!(target.cmd, "./agy_acp_server.par");
        assert_eq!(target.args, vec!["--uid=".to_owned()]);
        assert!(target.env.is_empty());
        assert_eq!(target.sha256, None);
        let mac = select_target(BUILTIN_ENTRY, "darwin-aarch64")?;
        assert!(mac.args.is_empty());
        Ok(())
    }

    #[test]
    fn an_index_is_searched_for_the_agent() -> crate::TestResult {
        let entry: Value = serde_json::from_str(BUILTIN_ENTRY)?;
        let index = serde_json::json!({
            "version": "1.0.0",
            "agents": [{"id": "other", "version": "9"}, entry],
        });
        let target = select_target(&index.to_string(), "windows-x86_64")?;
        assert_eq!(target.cmd, "./agy_acp_server.exe");
        let empty = serde_json::json!({"version": "1.0.0", "agents": []});
        assert!(matches!(
            select_target(&empty.to_string(), "linux-x86_64"),
            Err(InstallError::AgentMissing)
        ));
        Ok(())
    }

    #[test]
    fn another_version_is_refused() -> crate::TestResult {
        let mut entry: Value = serde_json::from_str(BUILTIN_ENTRY)?;
        entry["version"] = "1.4.0".into();
        let error = select_target(&entry.to_string(), "linux-x86_64");
        assert!(
            matches!(&error, Err(InstallError::VersionMismatch { found, .. }) if found == "1.4.0")
        );
        Ok(())
    }

    #[test]
    fn a_missing_platform_is_named() -> crate::TestResult {
        let error = select_target(BUILTIN_ENTRY, "linux-riscv64");
        assert!(matches!(&error, Err(InstallError::PlatformMissing(p)) if p == "linux-riscv64"));
        Ok(())
    }

    #[test]
    fn malformed_parts_are_named() -> crate::TestResult {
        let mut entry: Value = serde_json::from_str(BUILTIN_ENTRY)?;
        entry["distribution"]["binary"]["linux-x86_64"]["cmd"] = 5.into();
        let Err(error) = select_target(&entry.to_string(), "linux-x86_64") else {
            return Err("a numeric cmd was accepted".into());
        };
        assert!(error.to_string().contains("linux-x86_64.cmd"), "{error}");
        assert!(matches!(
            select_target("not json", "linux-x86_64"),
            Err(InstallError::AgentIndexMalformed(_))
        ));
        Ok(())
    }

    #[test]
    fn env_and_sha256_are_read() -> crate::TestResult {
        let mut entry: Value = serde_json::from_str(BUILTIN_ENTRY)?;
        let target = &mut entry["distribution"]["binary"]["linux-x86_64"];
        target["env"] = serde_json::json!({"A": "1"});
        target["sha256"] = "AB".repeat(32).into();
        let parsed = select_target(&entry.to_string(), "linux-x86_64")?;
        assert_eq!(parsed.env.get("A").map(String::as_str), Some("1"));
        assert_eq!(parsed.sha256, Some("ab".repeat(32)));
        Ok(())
    }
}
