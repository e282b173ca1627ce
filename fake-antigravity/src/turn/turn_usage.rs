//! The end-of-turn `usage_update` (`turn_usage`, on by default): sent after the turn's
//! text and before the `session/prompt` answer, unless the turn scripted its own `usage`
//! step or the prompt was cancelled.

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Client, Error};

use crate::acp::session_updates::{send_update, usage_update};
use crate::script::{Script, Step};
use crate::turn::turn_select::{TurnChoice, choose_turn};

/// Sends the end-of-turn `usage_update` for a prompt whose text was `prompt` and whose
/// answer was `answer`, when the script says so.
pub fn send_turn_usage(
    script: &Script,
    cx: &ConnectionTo<Client>,
    session_id: &str,
    prompt: &str,
    answer: &str,
) -> Result<(), Error> {
    let usage = script.turn_usage;
    if !usage.enabled || scripts_its_own_usage(script, prompt) {
        return Ok(());
    }
    let used = crate::script::turn_usage::tokens_in_context(prompt, answer);
    send_update(cx, session_id, usage_update(used, usage.size))
}

fn scripts_its_own_usage(script: &Script, prompt: &str) -> bool {
    match choose_turn(&script.turns, prompt) {
        TurnChoice::Turn(index) => script
            .turns
            .get(index)
            .is_some_and(|turn| turn.steps.iter().any(|s| matches!(s, Step::Usage(_)))),
        TurnChoice::Echo | TurnChoice::Unmatched => false,
    }
}
