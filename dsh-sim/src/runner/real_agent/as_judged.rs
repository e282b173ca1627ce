//! What is judged differently under a real agent: which scenarios run against which server
//! ([`skip_reason`]), the `expect.wire` checks only the fake's own journal can judge
//! ([`fake_journal_checks_dropped`]), and what an agent says its own way, judged by what it
//! means ([`judge_by_meaning`]).

use crate::runner::judge::wire::ProcessFacts;
use crate::runner::options::ServerChoice;
use crate::scenario::{Scenario, WireExpectations};

/// Why the runner does not play `scenario` against `server`, if it does not.
pub fn skip_reason(scenario: &Scenario, server: &ServerChoice) -> Option<String> {
    match server {
        ServerChoice::Fake { .. } => None,
        ServerChoice::Agent(agent) => match &scenario.fake_only {
            Some(reason) => Some(format!("fake only: {reason}")),
            None => agent.kind.cannot_play(scenario),
        },
        // Any ACP server command, its model unscripted: what a scenario expects of the
        // model's words holds there only when the command is a scripted one (`--agent`
        // scripts the model for a real agent).
        ServerChoice::Command(_) | ServerChoice::Installed(_) => scenario
            .fake_only
            .as_ref()
            .map(|reason| format!("fake only: {reason}")),
    }
}

/// Takes out of `expect` the checks only the fake's own journal can judge (what the
/// server did on MCP, its native steps, its slash commands, its settings writes, why it
/// exited); whether any was there.
pub fn fake_journal_checks_dropped(expect: &mut WireExpectations) -> bool {
    let dropped = [
        expect.mcp_tool_calls.take().is_some(),
        expect.mcp_tool_results.take().is_some(),
        expect.mcp_exchanges.take().is_some(),
        expect.mcp_tools_listed.take().is_some(),
        expect.mcp_tool_results_any_order.take().is_some(),
        !std::mem::take(&mut expect.mcp_results_contain).is_empty(),
        expect.native_steps_withheld.take().is_some(),
        expect.native_actions.take().is_some(),
        expect.slash_commands.take().is_some(),
        expect.settings_written.take().is_some(),
        // Why a process exited is what the fake journals of itself; the relay sees a status.
        expect.exits.take().is_some(),
    ];
    dropped.contains(&true)
}

/// The kind of each option the fake offers, by its id: how an expected answer written
/// for the fake (`permission_answers: [allow]`) is judged against an agent whose options
/// are named otherwise (Gemini CLI's `proceed_once`).
const FAKE_OPTION_KINDS: &[(&str, &str)] = &[
    ("allow", "allow_once"),
    ("allow_always", "allow_always"),
    ("deny", "reject_once"),
];

/// Judges what a real agent announces its own way by what it means: `update_counts`
/// (how an agent chunks and announces its updates; Gemini CLI sends no `tool_call`
/// before a call's `tool_call_update`) is left to the fake, and permission answers are
/// compared by the kind of the option chosen. Whether `update_counts` was there.
pub fn judge_by_meaning(expect: &mut WireExpectations, processes: &mut [ProcessFacts]) -> bool {
    if let Some(answers) = expect.permission_answers.as_mut() {
        for answer in answers.iter_mut() {
            if let Some((_, kind)) = FAKE_OPTION_KINDS.iter().find(|(id, _)| id == answer) {
                *answer = (*kind).to_owned();
            }
        }
        for process in processes.iter_mut() {
            process.permission_answers = process.permission_answer_kinds.clone();
        }
    }
    !std::mem::take(&mut expect.update_counts).is_empty()
}
