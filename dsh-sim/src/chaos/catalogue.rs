//! The fault catalogue: one row per fault kind `dsh-sim chaos` can pick, each a family, a
//! name, and how it changes the run's scenario (a JSON value of the scenario file) with
//! its point drawn from the run's generator. Adding a fault is adding a row; adding a
//! family is adding its rows (`--faults` selects a family by its rows' `family`).
//!
//! Server faults are the fake's `fake.faults` (`fake-antigravity/src/faults/server_faults.rs`)
//! and two process switches; MCP faults the fake client's `fake.mcp_client.fault`
//! (`faults/mcp_faults.rs`); DSH faults the agent loop's `dsh.fault`
//! (`scenario/dsh_fault.rs`); install faults `install.fault` (`scenario/install.rs`), which
//! turn a base that runs the fake as a command into one that installs it first.

use serde_json::{Value, json};

use crate::chaos::rng::SplitMix64;
use crate::scenario::KillStep;

/// How a row changes a scenario: `(scenario, the row's name, generator)`.
pub type Apply = fn(&mut Value, &str, &mut SplitMix64);

/// One fault the runner can pick.
#[derive(Debug, Clone, Copy)]
pub struct FaultRow {
    /// `server`, `mcp`, `dsh` or `install`.
    pub family: &'static str,
    /// Its name, as `--faults` and the summary spell it.
    pub name: &'static str,
    /// What it does to the scenario.
    pub apply: Apply,
    /// What a base must do for the fault to strike: the run's base is drawn among those
    /// that do (when any does).
    pub needs: Needs,
}

/// What a fault needs of its base to strike at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Any base.
    Nothing,
    /// A chat that launches the server (an install fault: a base that fails before any
    /// launch, such as an invalid tool catalogue, would leave the fault to strike the
    /// launch after the chat, the one meant to repair it).
    Launch,
    /// A chat with a host tool round (an MCP fault, a DSH fault at a tool round).
    ToolRound,
    /// A tool round of two or more calls (a reordered round: one result has one order).
    ParallelRound,
    /// A tool round whose tools are all plain (no subagent): a burst multiplies one call
    /// into 65, and 65 nested subagent chats, run one after another, are work no chat
    /// bound of the catalogue covers (seed 90210 run 296 burst `subagents/two_levels_deep`:
    /// 108 s of DSH running subagents, nothing hung). So a burst is never drawn there.
    PlainToolRound,
}

/// The frame index a server fault strikes at is drawn from `0..FRAME_SPAN`: the fast
/// scenarios write between 4 and 60 frames per process, most under 20.
pub const FRAME_SPAN: u64 = 20;
/// The byte offset of a split frame is drawn from `0..=SPLIT_SPAN` (clamped to the frame).
pub const SPLIT_SPAN: u64 = 400;

/// Every fault the runner knows.
pub const CATALOGUE: &[FaultRow] = &[
    server("exit"),
    server("sigkill"),
    FaultRow {
        family: "server",
        needs: Needs::Nothing,
        name: "ignore_sigterm_and_eof",
        apply: |scenario, _, _| {
            let process = entry(scenario, &["fake", "process"]);
            process["ignore_sigterm"] = json!(true);
            process["linger"] = json!(true);
        },
    },
    server("stall"),
    server("stall_then_resume"),
    server("garbage_line"),
    server("truncated_line"),
    server("split_frame"),
    server("close_stdout"),
    FaultRow {
        family: "server",
        needs: Needs::Nothing,
        name: "stderr_flood",
        apply: |scenario, _, rng| {
            let bytes = rng.between(64 * 1024, 4 * 1024 * 1024);
            entry(scenario, &["fake", "process"])["stderr_flood_bytes"] = json!(bytes);
        },
    },
    server("response_twice"),
    server("unknown_id_response"),
    server("unknown_session_notification"),
    server("chunk_after_result"),
    mcp("disconnect_mid_call"),
    mcp("call_twice"),
    mcp("call_after_turn"),
    mcp("stale_token"),
    FaultRow {
        needs: Needs::PlainToolRound,
        ..mcp("burst")
    },
    mcp("reset_while_result"),
    dsh_at_chunk("abort"),
    dsh_at_chunk("drop_stream"),
    dsh_at_chunk("dispose"),
    dsh("late_result"),
    dsh("history_drop_result"),
    dsh("history_repeat_result"),
    FaultRow {
        needs: Needs::ParallelRound,
        ..dsh("history_reorder_results")
    },
    dsh("title_while_parked"),
    FaultRow {
        family: "install",
        needs: Needs::Launch,
        name: "drop_connection",
        apply: |scenario, _, rng| {
            let at_byte = rng.below(INSTALL_BYTE_SPAN);
            install(scenario)["fault"] = json!({"kind": "drop_connection", "at_byte": at_byte});
        },
    },
    FaultRow {
        family: "install",
        needs: Needs::Launch,
        name: "kill_installer",
        apply: |scenario, _, rng| {
            let steps = KillStep::ALL;
            let step = steps[rng.below(steps.len() as u64) as usize];
            install(scenario)["fault"] =
                json!({"kind": "kill_installer", "at_step": step.as_str()});
        },
    },
    FaultRow {
        family: "install",
        needs: Needs::Launch,
        name: "swap_file_before_launch",
        apply: |scenario, _, _| {
            install(scenario)["fault"] = json!({"kind": "swap_file_before_launch"});
        },
    },
];

/// The faults that cannot hold on Windows, and why (a family asked for by name, or the
/// whole catalogue, leaves them out there).
const NOT_ON_WINDOWS: [&str; 1] = ["swap_file_before_launch"];

/// Why [`NOT_ON_WINDOWS`] cannot hold there.
const NOT_ON_WINDOWS_REASON: &str = "Windows keeps a retired install's files while the pooled \
     server that was launched from them runs, so a swapped file cannot retire it \
     (install/swap_file_retires_pooled_process is marked linux, macos)";

/// Whether `row` can hold on this system.
pub fn runs_here(row: &FaultRow) -> bool {
    !(cfg!(windows) && NOT_ON_WINDOWS.contains(&row.name))
}

/// The `tools/call` an MCP fault strikes at is drawn from `0..MCP_CALL_SPAN` (the fast
/// tool scenarios make one or two calls per process; a point past the last is "not struck").
pub const MCP_CALL_SPAN: u64 = 2;
/// The chat chunk a DSH abort, drop or disposal strikes at is drawn from
/// `0..CHUNK_SPAN` (the fast scenarios stream between 3 and 40 chunks per chat).
pub const CHUNK_SPAN: u64 = 24;
/// The archive byte after which the agent index host drops the connection is drawn from
/// `0..INSTALL_BYTE_SPAN` (the test archive is about 900 bytes).
pub const INSTALL_BYTE_SPAN: u64 = 1_000;

/// An MCP client fault of `fake.mcp_client.fault`, at a drawn call.
const fn mcp(name: &'static str) -> FaultRow {
    FaultRow {
        family: "mcp",
        needs: Needs::ToolRound,
        name,
        apply: |scenario, kind, rng| {
            let call = rng.below(MCP_CALL_SPAN);
            entry(scenario, &["fake", "mcp_client"])["fault"] = json!({"kind": kind, "call": call});
        },
    }
}

/// A DSH fault of `dsh.fault` that strikes at a drawn chunk of the chat.
const fn dsh_at_chunk(name: &'static str) -> FaultRow {
    FaultRow {
        family: "dsh",
        needs: Needs::Nothing,
        name,
        apply: |scenario, kind, rng| {
            let at_chunk = rng.below(CHUNK_SPAN);
            entry(scenario, &["dsh"])["fault"] = json!({"kind": kind, "at_chunk": at_chunk});
        },
    }
}

/// A DSH fault of `dsh.fault` with no point of its own (it strikes at the chat's first
/// tool round, or its first request after one).
const fn dsh(name: &'static str) -> FaultRow {
    FaultRow {
        family: "dsh",
        needs: Needs::ToolRound,
        name,
        apply: |scenario, kind, _| {
            entry(scenario, &["dsh"])["fault"] = json!({ "kind": kind });
        },
    }
}

/// The base's `install:` block, made (the defaults: the fake's archive served on
/// loopback, installed into a fresh cache) when the base runs the fake as a command.
fn install(scenario: &mut Value) -> &mut Value {
    entry(scenario, &["install"])
}

/// A server fault of `fake.faults`, struck at a drawn frame.
const fn server(name: &'static str) -> FaultRow {
    FaultRow {
        family: "server",
        needs: Needs::Nothing,
        name,
        apply: add_server_fault,
    }
}

/// Adds the fault `kind` (the row's name) at a drawn frame, with its drawn parameter.
fn add_server_fault(scenario: &mut Value, kind: &str, rng: &mut SplitMix64) {
    let mut fault = json!({ "at_frame": rng.below(FRAME_SPAN), "kind": kind });
    match kind {
        "stall_then_resume" => fault["ms"] = json!(rng.between(50, 400)),
        "split_frame" => fault["at_byte"] = json!(rng.below(SPLIT_SPAN + 1)),
        _ => {}
    }
    entry(scenario, &["fake"])["faults"] = json!([fault]);
}

/// Applies `row` to `scenario`.
pub fn apply(row: &FaultRow, scenario: &mut Value, rng: &mut SplitMix64) {
    (row.apply)(scenario, row.name, rng);
}

/// The object at `path` inside `value`, made (as `{}`) where missing.
pub fn entry<'a>(value: &'a mut Value, path: &[&str]) -> &'a mut Value {
    let mut here = value;
    for key in path {
        if !here.is_object() {
            *here = json!({});
        }
        here = &mut here[*key];
        if here.is_null() {
            *here = json!({});
        }
    }
    here
}

/// The rows `--faults LIST` names (a family or a fault name each; empty: every row), less
/// the rows that cannot hold on this system ([`runs_here`]); naming one of those is an error.
pub fn select(names: &[String]) -> Result<Vec<&'static FaultRow>, String> {
    if names.is_empty() {
        return Ok(CATALOGUE.iter().filter(|row| runs_here(row)).collect());
    }
    if let Some(row) = CATALOGUE
        .iter()
        .find(|row| names.iter().any(|n| n == row.name) && !runs_here(row))
    {
        return Err(format!(
            "the fault `{}` cannot hold on this system: {NOT_ON_WINDOWS_REASON}",
            row.name
        ));
    }
    let mut rows = Vec::new();
    for name in names {
        let matched: Vec<&FaultRow> = CATALOGUE
            .iter()
            .filter(|row| (row.name == name || row.family == name) && runs_here(row))
            .collect();
        if matched.is_empty() {
            return Err(format!(
                "no fault or family named `{name}` (known: {})",
                CATALOGUE
                    .iter()
                    .map(|r| r.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        rows.extend(matched);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_rows_that_hold_here_are_selected() -> Result<(), String> {
        let all = select(&[])?;
        let install = select(&["install".to_owned()])?;
        let swap = select(&["swap_file_before_launch".to_owned()]);
        if cfg!(windows) {
            assert!(all.iter().all(|row| row.name != "swap_file_before_launch"));
            assert!(
                install
                    .iter()
                    .all(|row| row.name != "swap_file_before_launch")
            );
            assert!(swap.is_err_and(|e| e.contains("cannot hold on this system")));
        } else {
            assert_eq!(all.len(), CATALOGUE.len());
            assert!(
                install
                    .iter()
                    .any(|row| row.name == "swap_file_before_launch")
            );
            assert!(swap.is_ok());
        }
        Ok(())
    }

    #[test]
    fn every_server_row_names_a_kind_the_fake_knows() {
        let kinds: Vec<&str> = fake_antigravity::faults::server_faults::ServerFaultKind::ALL
            .iter()
            .map(|k| k.name())
            .collect();
        for row in CATALOGUE.iter().filter(|r| r.family == "server") {
            let process_switch = ["ignore_sigterm_and_eof", "stderr_flood"].contains(&row.name);
            assert!(process_switch || kinds.contains(&row.name), "{}", row.name);
        }
        for kind in kinds {
            assert!(
                CATALOGUE.iter().any(|r| r.name == kind),
                "no row for {kind}"
            );
        }
    }

    #[test]
    fn no_two_rows_share_a_name() {
        // The driver finds a run's fault among the journaled ones by its name alone.
        let mut names: Vec<&str> = CATALOGUE.iter().map(|r| r.name).collect();
        names.sort_unstable();
        let count = names.len();
        names.dedup();
        assert_eq!(names.len(), count, "{names:?}");
    }

    #[test]
    fn a_server_row_adds_one_fault_with_its_point() {
        let mut scenario = json!({"fake": {}});
        let mut rng = SplitMix64::new(1);
        let Some(row) = CATALOGUE.iter().find(|r| r.name == "split_frame") else {
            panic!("no split_frame row");
        };
        apply(row, &mut scenario, &mut rng);
        let fault = &scenario["fake"]["faults"][0];
        assert_eq!(fault["kind"], "split_frame");
        assert!(fault["at_frame"].as_u64().is_some_and(|f| f < FRAME_SPAN));
        assert!(fault["at_byte"].as_u64().is_some());
    }
}
