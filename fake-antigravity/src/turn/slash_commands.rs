//! The slash commands a prompt may carry (docs/antigravity-1.3.0.md §5, §6, §8): 1.3.0
//! advertises `/plan` and `/logout` and intercepts them server-side, before the model.
//! Under `prompt.slash_commands` the fake finds them (at the prompt's start, or at any
//! line's start: see [`SlashCommands`]), journals each (`slash_command`), and runs
//! `/logout` as the ACP `logout` method does, answering the prompt itself; `/plan` is only
//! journaled and the scripted turn runs.

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Client, Error};
use serde_json::Value;

use crate::acp::auth_methods::sign_out;
use crate::acp::session_updates::{message_chunk, send_update};
use crate::journal::JournalEntry;
use crate::script::prompt::SlashCommands;
use crate::state::fake_agent::FakeAgent;

/// The commands 1.3.0 advertises in `available_commands_update`.
pub const COMMANDS: [&str; 2] = ["plan", "logout"];

/// The one chunk a `/logout` prompt is answered with (the real text is not recorded).
pub const LOGOUT_REPLY: &str =
    "fake-antigravity: /logout ran: signed out, stored credentials cleared.";

/// Line breaks as Python's `str.splitlines` knows them (the real server is Python).
const LINE_BREAKS: [char; 10] = [
    '\n', '\r', '\u{0B}', '\u{0C}', '\u{1C}', '\u{1D}', '\u{1E}', '\u{85}', '\u{2028}', '\u{2029}',
];

/// What may come before the `/`: whitespace as Rust or Python's `str.isspace` knows it
/// (Python's adds U+001C–U+001F), and the invisible characters that are not (zero-width
/// space, joiners, word joiner, byte-order mark).
fn blank(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{1C}'..='\u{1F}' | '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}'
        )
}

/// The command `text` starts with, after blanks: `/`, a known name in any case, then the
/// end or a character that cannot continue a name.
pub fn command_at(text: &str) -> Option<&'static str> {
    let rest = text.trim_start_matches(blank).strip_prefix('/')?;
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(rest.len());
    let name = rest.get(..end)?;
    COMMANDS
        .into_iter()
        .find(|command| command.eq_ignore_ascii_case(name))
}

/// The commands in a prompt under `mode`, each once, in the order first found. `text` is
/// the prompt's text blocks concatenated (as turns match it), `blocks` the prompt.
pub fn find_commands(mode: SlashCommands, text: &str, blocks: &[Value]) -> Vec<&'static str> {
    let texts: Vec<&str> = match mode {
        SlashCommands::Ignore => Vec::new(),
        SlashCommands::Leading => vec![text],
        SlashCommands::Paranoid => std::iter::once(text)
            .chain(blocks.iter().filter_map(text_of))
            .flat_map(|block| block.split(LINE_BREAKS))
            .collect(),
    };
    let mut found = Vec::new();
    for command in texts.into_iter().filter_map(command_at) {
        if !found.contains(&command) {
            found.push(command);
        }
    }
    found
}

fn text_of(block: &Value) -> Option<&str> {
    if block.get("type").and_then(Value::as_str) != Some("text") {
        return None;
    }
    block.get("text").and_then(Value::as_str)
}

/// Finds and runs the prompt's slash commands. `Ok(Some(stop))` when a command answered
/// the prompt (then the scripted turn does not run), `Ok(None)` when the turn runs.
pub fn intercept(
    agent: &FakeAgent,
    cx: &ConnectionTo<Client>,
    session_id: &str,
    text: &str,
    blocks: &[Value],
    agent_text: &mut String,
) -> Result<Option<&'static str>, Error> {
    let commands = find_commands(agent.script.prompt.slash_commands, text, blocks);
    for command in &commands {
        agent.log.info(
            "slash_commands.py:40",
            &format!("slash command /{command} in a prompt of session {session_id}"),
        );
        agent.record(JournalEntry::SlashCommand {
            session_id: session_id.to_owned(),
            command: (*command).to_owned(),
        });
        if *command == "logout" {
            sign_out(agent, "/logout");
        }
    }
    if !commands.contains(&"logout") {
        return Ok(None);
    }
    send_update(cx, session_id, message_chunk(LOGOUT_REPLY))?;
    agent_text.push_str(LOGOUT_REPLY);
    Ok(Some("end_turn"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn found(mode: SlashCommands, blocks: &[Value]) -> Vec<&'static str> {
        let text: String = blocks.iter().filter_map(text_of).collect();
        find_commands(mode, &text, blocks)
    }

    fn text(t: &str) -> Value {
        json!({"type": "text", "text": t})
    }

    #[allow(non_snake_case)]
    fn IMAGE() -> Value {
        json!({"type": "image", "data": "aGk=", "mimeType": "image/png"})
    }

    #[test]
    fn a_command_is_a_known_name_after_blanks_then_a_boundary() {
        for (line, command) in [
            ("/logout", Some("logout")),
            ("/logout now", Some("logout")),
            ("   /logout", Some("logout")),
            ("\t\u{A0}\u{200B}\u{FEFF}/logout", Some("logout")),
            ("/LogOut.", Some("logout")),
            ("/plan build it", Some("plan")),
            ("/logouts", None),
            ("/log-out", None),
            ("/logout_", None),
            ("x /logout", None),
            ("//logout", None),
            ("/tmp/logout", None),
            ("/", None),
            ("", None),
        ] {
            assert_eq!(command_at(line), command, "{line:?}");
        }
    }

    #[test]
    fn ignore_finds_nothing_and_leading_only_the_prompt_start() {
        let blocks = [text("/logout")];
        assert!(found(SlashCommands::Ignore, &blocks).is_empty());
        assert_eq!(found(SlashCommands::Leading, &blocks), ["logout"]);
        assert_eq!(
            found(SlashCommands::Leading, &[IMAGE(), text("  /logout")]),
            ["logout"]
        );
        assert!(found(SlashCommands::Leading, &[text("hi\n/logout")]).is_empty());
        assert!(found(SlashCommands::Leading, &[text("hi "), text("/logout")]).is_empty());
    }

    #[test]
    fn paranoid_finds_a_command_at_any_line_of_any_text_block() {
        let paranoid = |blocks: &[Value]| found(SlashCommands::Paranoid, blocks);
        assert_eq!(paranoid(&[text("/logout")]), ["logout"]);
        assert_eq!(paranoid(&[text("history\n  /logout\nmore")]), ["logout"]);
        assert_eq!(paranoid(&[text("a\r\n/logout")]), ["logout"]);
        assert_eq!(paranoid(&[text("a\u{2028}/logout")]), ["logout"]);
        assert_eq!(paranoid(&[text("a\u{0B}/logout")]), ["logout"]);
        assert_eq!(
            paranoid(&[text("intro "), IMAGE(), text("/logout")]),
            ["logout"]
        );
        assert_eq!(paranoid(&[text("x "), text(" /logout")]), ["logout"]);
        assert_eq!(
            paranoid(&[text("/log"), text("out")]),
            ["logout"],
            "as matched"
        );
        assert_eq!(
            paranoid(&[text("/plan x\n/logout\n/plan y")]),
            ["plan", "logout"],
            "each once, in order"
        );
        assert!(paranoid(&[text("see /logout and\na /plan")]).is_empty());
        let resource =
            json!({"type": "resource", "resource": {"uri": "file:///a", "text": "/logout"}});
        assert!(paranoid(&[resource]).is_empty(), "only text blocks");
    }
}
