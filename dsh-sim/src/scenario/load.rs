//! Reading a scenario file strictly: YAML errors, unknown keys, wrong types and semantic
//! mistakes all become a [`ScenarioError`] that names the file, line and column.

use std::path::{Path, PathBuf};

use super::Scenario;

/// Why a scenario file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{}: cannot read the scenario: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid scenario, at a known place.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// What is wrong, naming the field.
        message: String,
    },
    /// The file is not a valid scenario, at no particular place.
    #[error("{}: {message}", path.display())]
    InvalidUnlocated {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// Reads and parses the scenario at `path`.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse(&text, path)
}

/// Parses scenario text; `path` only names the source in errors.
pub fn parse(text: &str, path: &Path) -> Result<Scenario, ScenarioError> {
    let scenario = serde_saphyr::from_str::<Scenario>(text).map_err(|error| {
        let message = error.without_snippet().to_string();
        match error.location() {
            Some(location) if location.line() > 0 => {
                let (line, column) = (location.line(), location.column());
                ScenarioError::Invalid {
                    path: path.to_owned(),
                    line,
                    column,
                    message: name_the_field(text, line, column, strip_location(&message)),
                }
            }
            _ => ScenarioError::InvalidUnlocated {
                path: path.to_owned(),
                message,
            },
        }
    })?;
    check_executions_name_tools(&scenario, text, path)?;
    Ok(scenario)
}

/// serde-saphyr ends its plain message with ` at line L, column C`; the error already
/// carries the location, so drop the repetition.
fn strip_location(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(at) if message[at..].contains(", column ") => &message[..at],
        _ => message,
    }
}

/// Type errors (`invalid u64`) do not say which field they concern; add the key written
/// before the error's column on its line, when there is one.
fn name_the_field(text: &str, line: u64, column: u64, message: &str) -> String {
    if message.contains("field `") {
        return message.to_owned();
    }
    let key = usize::try_from(line)
        .ok()
        .and_then(|line| text.lines().nth(line.saturating_sub(1)))
        .and_then(|source| {
            let end = usize::try_from(column.saturating_sub(1)).ok()?;
            last_key_before(source.get(..end).unwrap_or(source))
        });
    match key {
        Some(key) => format!("{message} (field `{key}`)"),
        None => message.to_owned(),
    }
}

/// The last `key:` (followed by a space or the end) in `prefix`.
fn last_key_before(prefix: &str) -> Option<String> {
    let bytes = prefix.as_bytes();
    (0..bytes.len()).rev().find_map(|colon| {
        let follows_ok = bytes.get(colon + 1).is_none_or(|b| b.is_ascii_whitespace());
        if bytes[colon] != b':' || !follows_ok {
            return None;
        }
        let start = bytes[..colon]
            .iter()
            .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-'))
            .map_or(0, |p| p + 1);
        (start < colon).then(|| prefix[start..colon].to_owned())
    })
}

/// `expect.executions` may only count tools that `dsh.tools` declares.
fn check_executions_name_tools(
    scenario: &Scenario,
    text: &str,
    path: &Path,
) -> Result<(), ScenarioError> {
    let Some(unknown) = scenario
        .expect
        .executions
        .keys()
        .find(|name| !scenario.dsh.tools.iter().any(|tool| &tool.name == *name))
    else {
        return Ok(());
    };
    let message =
        format!("`expect.executions` counts `{unknown}`, which `dsh.tools` does not declare");
    Err(match locate_key_after(text, "executions", unknown) {
        Some((line, column)) => ScenarioError::Invalid {
            path: path.to_owned(),
            line,
            column,
            message,
        },
        None => ScenarioError::InvalidUnlocated {
            path: path.to_owned(),
            message,
        },
    })
}

/// The 1-based line and column of the first `key:` after the first `anchor:`.
fn locate_key_after(text: &str, anchor: &str, key: &str) -> Option<(u64, u64)> {
    let anchor_at = text.find(&format!("{anchor}:"))?;
    let needle = format!("{key}:");
    let relative = text[anchor_at + anchor.len() + 1..].find(&needle)?;
    let offset = anchor_at + anchor.len() + 1 + relative;
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |p| p + 1) + 1;
    Some((u64::try_from(line).ok()?, u64::try_from(column).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_key_before_a_column() {
        assert_eq!(
            last_key_before("  generations: "),
            Some("generations".into())
        );
        assert_eq!(
            last_key_before("    - { name: a, permission: "),
            Some("permission".into())
        );
        assert_eq!(last_key_before("    - "), None);
    }

    #[test]
    fn strips_the_repeated_location() {
        assert_eq!(
            strip_location("invalid u64 at line 7, column 16"),
            "invalid u64"
        );
        assert_eq!(strip_location("no location"), "no location");
    }
}
