//! Whether the fake's scripted faults acted (claim B04). A server fault of `fake.faults`
//! or the MCP client fault of `fake.mcp_client.fault` that no fake process journaled as
//! applied (`ServerFaultApplied`, `McpFaultApplied`) proves nothing: the run fails, as it
//! does for a `dsh.fault` that never struck; so does a checked-in chaos scenario
//! (`expect.chaos`) at a fixed point. A run whose point was drawn (`dsh-sim chaos`,
//! `RunnerOptions::faults_drawn`), which may lie past the run's end, gets a note
//! ([`FAKE_FAULT_NOT_APPLIED`]) instead, and the session counts its fault as struck only
//! when [`applied_names`] holds it.
//!
//! Every fake process of a run gets the whole script (each chat's own process, a pooled one,
//! a server relaunched after a crash), so each may apply each fault once. A scripted fault
//! counts as applied when any one process of the run journaled it: a server fault by its
//! kind and its scripted `at_frame`, an MCP client fault by its kind and its `call`. The
//! same server fault scripted twice needs two such entries in one process. A process that
//! did not reach the fault's point (the relaunched server after a `sigkill`, say) is not a
//! failure.

use fake_antigravity::faults::mcp_faults::McpFault;
use fake_antigravity::faults::server_faults::ServerFault;
use fake_antigravity::journal::JournalEntry;
use fake_antigravity::script::Script;

/// The start of the note a chaos run gets when a scripted fault of the fake never applied.
pub const FAKE_FAULT_NOT_APPLIED: &str = "fake fault not applied";

/// The kind names of the faults the journal shows applied, server and MCP client faults
/// alike, over every process in journal order.
pub fn applied_names(journal: &[Vec<JournalEntry>]) -> Vec<String> {
    journal
        .iter()
        .flatten()
        .filter_map(|entry| match entry {
            JournalEntry::ServerFaultApplied { fault, .. }
            | JournalEntry::McpFaultApplied { fault, .. } => Some(fault.clone()),
            _ => None,
        })
        .collect()
}

/// One sentence for each fault `script` names that no process of `journal` applied.
pub fn never_applied(script: &Script, journal: &[Vec<JournalEntry>]) -> Vec<String> {
    let mut sentences = Vec::new();
    for (n, fault) in script.faults.iter().enumerate() {
        let scripted = script
            .faults
            .iter()
            .filter(|f| same_point(f, fault))
            .count();
        // Once per distinct fault: a duplicate's sentence is its first copy's.
        if script.faults[..n].iter().any(|f| same_point(f, fault)) {
            continue;
        }
        let applied = journal
            .iter()
            .map(|process| {
                process
                    .iter()
                    .filter(|entry| server_fault_entry(entry, fault))
                    .count()
            })
            .max()
            .unwrap_or(0);
        if applied < scripted {
            sentences.push(format!(
                "the scripted server fault `{}` at frame {} never applied{}: no fake process \
                 journaled it (the most frames one process wrote: {})",
                fault.kind.name(),
                fault.at_frame,
                times(scripted, applied),
                most(journal, |e| matches!(e, JournalEntry::AcpOut { .. })),
            ));
        }
    }
    if let Some(fault) = script.mcp_client.fault
        && !journal.iter().flatten().any(|e| mcp_fault_entry(e, fault))
    {
        sentences.push(format!(
            "the scripted MCP client fault `{}` at call {} never applied: no fake process \
             journaled it (the most tools/call one process made: {})",
            fault.kind.name(),
            fault.call,
            most(journal, is_tool_call),
        ));
    }
    sentences
}

/// Adds a sentence for each scripted fault that never applied to `failures`, or, when its
/// point was `drawn`, to `notes` after [`FAKE_FAULT_NOT_APPLIED`].
pub fn judge(
    script: &Script,
    journal: &[Vec<JournalEntry>],
    drawn: bool,
    failures: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    for sentence in never_applied(script, journal) {
        if drawn {
            notes.push(format!("{FAKE_FAULT_NOT_APPLIED}: {sentence}"));
        } else {
            failures.push(sentence);
        }
    }
}

fn same_point(a: &ServerFault, b: &ServerFault) -> bool {
    a.kind == b.kind && a.at_frame == b.at_frame
}

fn server_fault_entry(entry: &JournalEntry, scripted: &ServerFault) -> bool {
    matches!(entry, JournalEntry::ServerFaultApplied { fault, at_frame, .. }
        if fault == scripted.kind.name() && *at_frame == scripted.at_frame)
}

fn mcp_fault_entry(entry: &JournalEntry, scripted: McpFault) -> bool {
    matches!(entry, JournalEntry::McpFaultApplied { fault, call, .. }
        if fault == scripted.kind.name() && *call == scripted.call)
}

fn is_tool_call(entry: &JournalEntry) -> bool {
    matches!(entry, JournalEntry::McpRequest { method, .. } if method == "tools/call")
}

/// The most entries `counted` one process journaled.
fn most(journal: &[Vec<JournalEntry>], counted: fn(&JournalEntry) -> bool) -> usize {
    journal
        .iter()
        .map(|process| process.iter().filter(|e| counted(e)).count())
        .max()
        .unwrap_or(0)
}

/// ` (scripted 2 times, applied at most 1 time in one process)` for a fault scripted more
/// than once; nothing otherwise.
fn times(scripted: usize, applied: usize) -> String {
    if scripted > 1 {
        format!(" (scripted {scripted} times, applied at most {applied} in one process)")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use fake_antigravity::faults::mcp_faults::McpFaultKind;
    use fake_antigravity::faults::server_faults::ServerFaultKind;
    use serde_json::json;

    use super::*;

    fn script(faults: serde_json::Value) -> Script {
        serde_json::from_value(faults).unwrap()
    }

    fn server_applied(fault: &str, at_frame: usize) -> JournalEntry {
        JournalEntry::ServerFaultApplied {
            fault: fault.to_owned(),
            at_frame,
            frame: at_frame,
            effect: "did it".to_owned(),
        }
    }

    fn mcp_applied(fault: &str, call: usize) -> JournalEntry {
        JournalEntry::McpFaultApplied {
            fault: fault.to_owned(),
            call,
            server: "dsh".to_owned(),
            effect: "did it".to_owned(),
        }
    }

    fn frame() -> JournalEntry {
        JournalEntry::AcpOut { frame: json!({}) }
    }

    #[test]
    fn a_server_fault_no_process_journaled_fails_the_run() {
        let script = script(json!({"faults": [{"at_frame": 5, "kind": "sigkill"}]}));
        let journal = vec![vec![frame(), frame()]];
        let sentences = never_applied(&script, &journal);
        assert_eq!(sentences.len(), 1, "{sentences:?}");
        assert!(
            sentences[0].contains("`sigkill` at frame 5"),
            "{sentences:?}"
        );
        assert!(sentences[0].contains("wrote: 2"), "{sentences:?}");
        let (mut failures, mut notes) = (Vec::new(), Vec::new());
        judge(&script, &journal, false, &mut failures, &mut notes);
        assert_eq!((failures.len(), notes.len()), (1, 0));
    }

    #[test]
    fn a_drawn_fault_gets_a_note_instead() {
        let script = script(json!({"mcp_client": {"fault": {"kind": "burst", "call": 1}}}));
        let (mut failures, mut notes) = (Vec::new(), Vec::new());
        judge(&script, &[vec![]], true, &mut failures, &mut notes);
        assert_eq!(failures, Vec::<String>::new());
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with(FAKE_FAULT_NOT_APPLIED), "{notes:?}");
        assert!(notes[0].contains("`burst` at call 1"), "{notes:?}");
    }

    #[test]
    fn a_fault_any_process_journaled_counts_as_applied() {
        let script = script(json!({
            "faults": [{"at_frame": 5, "kind": "sigkill"}],
            "mcp_client": {"fault": {"kind": "call_twice", "call": 0}},
        }));
        // The first process was killed; the relaunched one never reached frame 5.
        let journal = vec![
            vec![frame(), server_applied("sigkill", 5)],
            vec![frame(), mcp_applied("call_twice", 0)],
        ];
        assert_eq!(never_applied(&script, &journal), Vec::<String>::new());
        assert_eq!(applied_names(&journal), ["sigkill", "call_twice"]);
    }

    #[test]
    fn an_entry_of_another_point_or_kind_does_not_count() {
        let script = script(json!({
            "faults": [{"at_frame": 5, "kind": "sigkill"}],
            "mcp_client": {"fault": {"kind": "call_twice", "call": 1}},
        }));
        let journal = vec![vec![
            server_applied("sigkill", 4),
            server_applied("exit", 5),
            mcp_applied("call_twice", 0),
            mcp_applied("burst", 1),
        ]];
        assert_eq!(never_applied(&script, &journal).len(), 2);
    }

    #[test]
    fn a_fault_scripted_twice_needs_two_entries_in_one_process() {
        let script = script(json!({"faults": [
            {"at_frame": 0, "kind": "response_twice"},
            {"at_frame": 0, "kind": "response_twice"},
        ]}));
        let once_each = vec![
            vec![server_applied("response_twice", 0)],
            vec![server_applied("response_twice", 0)],
        ];
        let sentences = never_applied(&script, &once_each);
        assert_eq!(sentences.len(), 1, "{sentences:?}");
        assert!(sentences[0].contains("scripted 2 times"), "{sentences:?}");
        let twice = vec![vec![
            server_applied("response_twice", 0),
            server_applied("response_twice", 0),
        ]];
        assert_eq!(never_applied(&script, &twice), Vec::<String>::new());
    }

    #[test]
    fn every_kind_is_matched_by_the_name_the_fake_journals() {
        for kind in ServerFaultKind::ALL {
            let script = script(json!({"faults": [{"at_frame": 1, "kind": kind.name()}]}));
            let journal = vec![vec![server_applied(kind.name(), 1)]];
            assert_eq!(never_applied(&script, &journal), Vec::<String>::new());
        }
        for kind in McpFaultKind::ALL {
            let script = script(json!({"mcp_client": {"fault": {"kind": kind.name(), "call": 0}}}));
            let journal = vec![vec![mcp_applied(kind.name(), 0)]];
            assert_eq!(never_applied(&script, &journal), Vec::<String>::new());
        }
    }
}
