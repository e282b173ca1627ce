//! `AgentProfileChoice`: which agent's way of naming a bridge call the adapter trusts in
//! permission requests and tool call updates (`agentProfile`, C21): the one `initialize`
//! names (the default), or a fixed one.

/// Which agent profile the adapter judges bridge calls by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentProfileChoice {
    /// By `initialize`'s `agentInfo.name`: `gemini-cli` is Gemini CLI, anything else (or
    /// none) Antigravity 1.3.0 (the default).
    #[default]
    Auto,
    /// Antigravity 1.3.0: a bridge call names the bridge in `_meta.mcp`.
    Antigravity,
    /// Gemini CLI: a bridge call names the bridge in its exact title and tool call id.
    GeminiCli,
}

impl AgentProfileChoice {
    /// The setting's spelling (`auto`, `antigravity`, `gemini-cli`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Antigravity => "antigravity",
            Self::GeminiCli => "gemini-cli",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_read_as_they_are_written() -> crate::TestResult {
        for choice in [
            AgentProfileChoice::Auto,
            AgentProfileChoice::Antigravity,
            AgentProfileChoice::GeminiCli,
        ] {
            let read: AgentProfileChoice =
                serde_json::from_value(serde_json::json!(choice.as_str()))?;
            assert_eq!(read, choice);
        }
        assert!(serde_json::from_value::<AgentProfileChoice>(serde_json::json!("gemini")).is_err());
        Ok(())
    }
}
