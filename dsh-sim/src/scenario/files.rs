//! Files on the real filesystem that a scenario plants before its chat (`dsh.files`) and
//! judges after it (`expect.files`), and the adapter's confinement settings a scenario
//! may change (`dsh.adapter.confinement`). Paths are relative to the scenario's
//! workspace: the runner's temporary folder, outside every scratch directory and every
//! path a confined server may reach. A fake native step names the same place with
//! `{workspace}` in its `path`.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, de};

/// What a native step's `path` may start with to name the scenario's workspace.
pub const WORKSPACE_PLACEHOLDER: &str = "{workspace}";

/// A path inside the scenario's workspace: relative, without `..`, not empty. Checked
/// while parsing, so a bad one has a location.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct WorkspacePath(String);

impl WorkspacePath {
    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for WorkspacePath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let path = std::path::Path::new(&text);
        let escapes = path
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)));
        if text.is_empty() || escapes {
            return Err(de::Error::custom(format!(
                "`{text}` must be a path inside the scenario's workspace: relative, without `..`"
            )));
        }
        Ok(Self(text))
    }
}

impl JsonSchema for WorkspacePath {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "WorkspacePath".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A path relative to the scenario's workspace, without `..`.",
            "type": "string",
            "minLength": 1,
        })
    }
}

/// What must hold of one path after the run (`expect.files`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileCheck {
    /// Whether the path exists (`false`: nothing was left there).
    #[serde(default)]
    pub exists: Option<bool>,
    /// Its exact content (it must be a readable file).
    #[serde(default)]
    pub content: Option<String>,
}

/// `dsh.adapter.confinement`: `AdapterConfig::confinement`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConfinementKnob {
    /// Refuse to start a server the kernel cannot confine.
    Required,
    /// Confine where the kernel can (the adapter's default).
    BestEffort,
    /// Never confine.
    Off,
}

impl From<ConfinementKnob> for antigravity_acp::ConfinementMode {
    fn from(knob: ConfinementKnob) -> Self {
        match knob {
            ConfinementKnob::Required => Self::Required,
            ConfinementKnob::BestEffort => Self::BestEffort,
            ConfinementKnob::Off => Self::Off,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_paths_stay_inside() {
        for good in ["secret.txt", "planted/secret.txt"] {
            assert!(serde_json::from_str::<WorkspacePath>(&format!("{good:?}")).is_ok());
        }
        for bad in ["", "/etc/passwd", "../escaped", "a/../../b", "./x"] {
            assert!(
                serde_json::from_str::<WorkspacePath>(&format!("{bad:?}")).is_err(),
                "{bad}"
            );
        }
    }
}
