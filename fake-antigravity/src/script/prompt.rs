//! `prompt:`, the script's switches for how the fake reads a `session/prompt` before its
//! scripted turn runs: whether it intercepts the slash commands it advertises (`/logout`,
//! `/plan`; docs/antigravity-1.3.0.md §5, §6, §8), and where in the prompt it looks for
//! them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the fake reads a prompt before its turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptScript {
    /// Whether and where the fake intercepts the slash commands it advertises in
    /// `available_commands_update` (`/logout`, `/plan`), as 1.3.0 does server-side
    /// (default `ignore`: none is).
    #[serde(default)]
    pub slash_commands: SlashCommands,
}

/// Where a slash command is recognised in a prompt.
///
/// A command is `/` then its name (`logout` or `plan`, in any case), ended by the end of
/// the text or a character that cannot be part of a name (anything but a letter, a digit,
/// `_` and `-`). Before the `/` only whitespace (Unicode's, plus zero-width spaces and
/// joiners and the byte-order mark) may come. Each recognised command is journaled
/// (`slash_command`) once per prompt. `/logout` then runs as the ACP `logout` method
/// does (the sign-in is dropped; with `$GEMINI_HOME` set, `acp_token.json` is deleted and
/// `auth.type` removed from `settings.json`, journaled `settings_written`) and answers the
/// prompt itself with one `agent_message_chunk` and `end_turn`, instead of the scripted
/// turn; `/plan` is only journaled, and the scripted turn runs (it stands for the model's
/// planning).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SlashCommands {
    /// No command is intercepted: a prompt is only text.
    #[default]
    Ignore,
    /// At the start of the prompt only: its text blocks concatenated (as turn matching
    /// reads them) begin with the command, after whitespace. Where the real server is
    /// recorded intercepting `/plan <task>`.
    Leading,
    /// Anywhere a line starts: at the start of any text block (so after an image or
    /// any other block too) and after any line break (`\n`, `\r`, vertical tab, form
    /// feed, NEL, U+2028, U+2029) inside one. A client that sends a conversation's history
    /// as text must neutralise every such line of its users' text.
    Paranoid,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignored_by_default_and_spelled_in_snake_case() -> Result<(), serde_json::Error> {
        let prompt: PromptScript = serde_json::from_str("{}")?;
        assert_eq!(prompt.slash_commands, SlashCommands::Ignore);
        let prompt: PromptScript = serde_json::from_str(r#"{"slash_commands":"paranoid"}"#)?;
        assert_eq!(prompt.slash_commands, SlashCommands::Paranoid);
        let prompt: PromptScript = serde_json::from_str(r#"{"slash_commands":"leading"}"#)?;
        assert_eq!(prompt.slash_commands, SlashCommands::Leading);
        assert!(serde_json::from_str::<PromptScript>(r#"{"slash_commands":"on"}"#).is_err());
        assert!(serde_json::from_str::<PromptScript>(r#"{"slash":"paranoid"}"#).is_err());
        Ok(())
    }
}
