//! Choosing the scripted turn that answers a prompt, as [`crate::script::PromptMatch`]
//! documents: the turn whose `prompt_contains` occurs latest in the prompt text wins
//! ("latest" = the occurrence that ends last, since the newest user message sits at the
//! end); a turn without a matcher matches anything with the lowest priority; ties go to
//! the turn declared first.

use crate::script::TurnScript;

/// What answers a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnChoice {
    /// The script has no turns: echo the prompt.
    Echo,
    /// The script has turns but none matches.
    Unmatched,
    /// This turn (index into `turns`).
    Turn(usize),
}

/// Picks the turn for `prompt_text`.
pub fn choose_turn(turns: &[TurnScript], prompt_text: &str) -> TurnChoice {
    if turns.is_empty() {
        return TurnChoice::Echo;
    }
    // (end of the latest occurrence, index); larger end wins, then smaller index.
    let mut best: Option<(usize, usize)> = None;
    let mut catch_all: Option<usize> = None;
    for (index, turn) in turns.iter().enumerate() {
        match turn.matcher.prompt_contains.as_deref() {
            None => {
                catch_all.get_or_insert(index);
            }
            Some(needle) => {
                let Some(start) = prompt_text.rfind(needle) else {
                    continue;
                };
                let end = start + needle.len();
                if best.is_none_or(|(best_end, _)| end > best_end) {
                    best = Some((end, index));
                }
            }
        }
    }
    match (best, catch_all) {
        (Some((_, index)), _) | (None, Some(index)) => TurnChoice::Turn(index),
        (None, None) => TurnChoice::Unmatched,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::PromptMatch;

    fn turn(contains: Option<&str>) -> TurnScript {
        TurnScript {
            matcher: PromptMatch {
                prompt_contains: contains.map(str::to_string),
            },
            ..TurnScript::default()
        }
    }

    #[test]
    fn latest_occurrence_wins_and_catch_all_is_last_resort() {
        let turns = vec![turn(Some("hello")), turn(Some("now call")), turn(None)];
        assert_eq!(choose_turn(&turns, "hello"), TurnChoice::Turn(0));
        assert_eq!(
            choose_turn(&turns, "hello\nassistant: hi\nuser: now call it"),
            TurnChoice::Turn(1)
        );
        assert_eq!(choose_turn(&turns, "something else"), TurnChoice::Turn(2));
        assert_eq!(choose_turn(&turns[..2], "nothing"), TurnChoice::Unmatched);
        assert_eq!(choose_turn(&[], "x"), TurnChoice::Echo);
    }

    #[test]
    fn ties_go_to_the_first_declared() {
        let turns = vec![turn(Some("tool")), turn(Some("the tool"))];
        assert_eq!(choose_turn(&turns, "use the tool"), TurnChoice::Turn(0));
    }
}
