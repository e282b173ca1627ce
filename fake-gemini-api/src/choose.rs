//! Which scripted turn answers a prompt: the turn whose `prompt_contains` occurs latest in
//! the prompt text (the occurrence that ends last, since the newest user message sits at
//! the end of a prompt that carries the whole history); a turn without `prompt_contains`
//! matches anything, with the lowest priority; ties go to the turn declared first. The
//! same rule the scenario format documents for the ACP fake's turns, so one script
//! answers the same prompt the same way under either server.

use crate::script::ModelTurn;

/// The index of the turn that answers `prompt_text`, if any does.
pub fn choose_turn(turns: &[ModelTurn], prompt_text: &str) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    let mut catch_all = None;
    for (index, turn) in turns.iter().enumerate() {
        match turn.prompt_contains.as_deref() {
            None => {
                catch_all.get_or_insert(index);
            }
            Some(needle) => {
                if let Some(start) = prompt_text.rfind(needle) {
                    let end = start + needle.len();
                    if best.is_none_or(|(best_end, _)| end > best_end) {
                        best = Some((end, index));
                    }
                }
            }
        }
    }
    best.map(|(_, index)| index).or(catch_all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(needle: Option<&str>) -> ModelTurn {
        ModelTurn {
            prompt_contains: needle.map(str::to_owned),
            ..ModelTurn::default()
        }
    }

    #[test]
    fn the_latest_occurrence_wins_and_a_catch_all_comes_last() {
        let turns = [
            turn(None),
            turn(Some("Read a.txt")),
            turn(Some("Read b.txt")),
        ];
        let history = "user: Read a.txt\nassistant: a.txt read.\nuser: Read b.txt";
        assert_eq!(choose_turn(&turns, history), Some(2));
        assert_eq!(choose_turn(&turns, "user: Read a.txt"), Some(1));
        assert_eq!(choose_turn(&turns, "something else"), Some(0));
        assert_eq!(choose_turn(&turns[1..], "something else"), None);
        let tie = [turn(Some("a.txt")), turn(Some("a.txt"))];
        assert_eq!(choose_turn(&tie, "Read a.txt"), Some(0));
        // Where an occurrence ends, not where it starts: both end at the prompt's end.
        let ending_together = [turn(Some("ab")), turn(Some("b"))];
        assert_eq!(choose_turn(&ending_together, "ab"), Some(0));
    }
}
