//! The fault catalogue: one row per fault kind `dsh-sim chaos` can pick, each a family, a
//! name, and how it changes the run's scenario (a JSON value of the scenario file) with
//! its point drawn from the run's generator. Adding a fault is adding a row; adding a
//! family is adding its rows (and its name to [`FAMILIES`]).
//!
//! Server faults are the fake's `fake.faults` (`fake-antigravity/src/script/faults.rs`)
//! and two process switches. The MCP, DSH and install families are built elsewhere; their
//! rows are listed below, to be enabled when their keys exist.

use serde_json::{Value, json};

use crate::chaos::rng::SplitMix64;

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
}

/// The families, in the order the summary lists them.
pub const FAMILIES: [&str; 4] = ["server", "mcp", "dsh", "install"];

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
    // TODO(issue 16, once the `faults` branch lands): the MCP family,
    // `fake.mcp_client.fault: {kind, call}` with kinds disconnect_mid_call, call_twice,
    // call_after_turn, stale_token, burst, reset_while_result, e.g.
    //   mcp("disconnect_mid_call"), ... with
    //   entry(scenario, &["fake", "mcp_client"])["fault"] = json!({"kind": K, "call": rng.below(4)})
    // TODO(issue 16, `faults` branch): the DSH family, `dsh.fault`:
    //   {kind: abort|drop_stream|dispose, at_chunk: rng.below(40)}, {kind: late_result},
    //   {kind: history_drop_result|history_repeat_result|history_reorder_results},
    //   {kind: title_while_parked}
    // TODO(issue 16, `pinst` branch): the install family, `install.fault`, which needs
    //   install scenarios as bases (`--scenarios scenarios/install`):
    //   {kind: drop_connection, at_byte: N}, {kind: kill_installer, at_step: ...},
    //   {kind: swap_file_before_launch}
];

/// A server fault of `fake.faults`, struck at a drawn frame.
const fn server(name: &'static str) -> FaultRow {
    FaultRow {
        family: "server",
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

/// The rows `--faults LIST` names (a family or a fault name each; empty: every row).
pub fn select(names: &[String]) -> Result<Vec<&'static FaultRow>, String> {
    if names.is_empty() {
        return Ok(CATALOGUE.iter().collect());
    }
    let mut rows = Vec::new();
    for name in names {
        let matched: Vec<&FaultRow> = CATALOGUE
            .iter()
            .filter(|row| row.name == name || row.family == name)
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
    fn every_server_row_names_a_kind_the_fake_knows() {
        let kinds: Vec<&str> = fake_antigravity::script::faults::ServerFaultKind::ALL
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
