//! What one chaos run is: from the seed and the run's index, the run's generator picks a
//! base scenario and a fault row, the row draws its point, and the base becomes the run's
//! scenario: the fault added, the bounds made small, a secret planted, `expect:` replaced
//! by `expect: { chaos: ... }`, the chat's `await_exits` dropped. The scenario is written as YAML text and parsed back like
//! any scenario file, so what runs is exactly what a replay file holds.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::chaos::catalogue::{FaultRow, Needs, apply, entry};
use crate::chaos::rng::SplitMix64;
use crate::scenario::Scenario;

/// The areas the default bases come from: fake-only and fast (no installs, no pools
/// waiting out idle timers, no sign-in flows).
pub const DEFAULT_AREAS: [&str; 8] = [
    "streaming",
    "tool_calls",
    "permissions",
    "quirks",
    "history",
    "subagents",
    "mcp_client",
    "models",
];

/// The adapter's `timeout` in a chaos run, at most (a scenario's own may be shorter).
pub const CHAOS_TIMEOUT_MS: u64 = 1_000;
/// The adapter's `tool_timeout` in a chaos run, at most.
pub const CHAOS_TOOL_TIMEOUT_MS: u64 = 2_000;
/// The adapter's `shutdown_grace` in a chaos run.
pub const CHAOS_SHUTDOWN_GRACE_MS: u64 = 200;
/// The bound on every generate's terminal chunk: a server that stops answering costs
/// the adapter one `timeout` to notice, after a start-up (spawn, `initialize`,
/// `session/new`) that is bounded by `timeout` as well, plus the fake's own scripted
/// waits and a margin for a loaded machine.
pub const TERMINAL_BOUND_MS: u64 = 3 * CHAOS_TIMEOUT_MS + 1_500;

/// A base scenario, parsed once.
#[derive(Debug, Clone)]
pub struct Base {
    /// Its file.
    pub path: PathBuf,
    /// Its YAML as a JSON value.
    pub value: Value,
}

/// The default base folders under `root` (the scenarios folder).
pub fn default_paths(root: &Path) -> Vec<PathBuf> {
    DEFAULT_AREAS.iter().map(|area| root.join(area)).collect()
}

/// The bases among the scenario files under `paths`: every one that parses and is fast
/// and fake-only (no `install:`, no `known_failure`, no longer time bound, no start-up
/// delay, no tool slower than 300 ms).
pub fn load_bases(paths: &[PathBuf]) -> Result<Vec<Base>, String> {
    let files = crate::runner::discover::scenario_files(paths).map_err(|e| e.to_string())?;
    let mut bases = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(scenario) = crate::scenario::parse(&text, &path) else {
            continue;
        };
        if !is_fast(&scenario) {
            continue;
        }
        let Ok(value) = serde_saphyr::from_str::<Value>(&text) else {
            continue;
        };
        bases.push(Base { path, value });
    }
    if bases.is_empty() {
        return Err("no base scenario: none of the files given is fast and fake-only".into());
    }
    Ok(bases)
}

fn is_fast(scenario: &Scenario) -> bool {
    scenario.install.is_none()
        && scenario.known_failure.is_none()
        && crate::scenario::not_run_here(scenario.platforms.as_ref()).is_none()
        && scenario.time_bound_secs.is_none()
        && scenario.fake.process.startup_delay_ms == 0
        && scenario.fake.faults.is_empty()
        && scenario.fake.mcp_client.fault.is_none()
        && scenario.dsh.fault.is_none()
        && scenario.expect.chaos.is_none()
        && scenario.dsh.tools.iter().all(|t| t.delay_ms <= 300)
}

/// Whether a base scenario gives a fault what it `needs` to strike.
fn fits(needs: Needs, value: &Value) -> bool {
    match needs {
        Needs::Nothing => true,
        Needs::Launch => launches(value),
        Needs::ToolRound => offers_tools(value) && script_steps(value).any(|s| is_call(s, 1)),
        Needs::ParallelRound => offers_tools(value) && script_steps(value).any(|s| is_call(s, 2)),
        Needs::PlainToolRound => fits(Needs::ToolRound, value) && !runs_subagents(value),
    }
}

/// Whether one of the chat's tools starts a subagent (`dsh.tools[].subagent`).
fn runs_subagents(value: &Value) -> bool {
    value
        .pointer("/dsh/tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| tools.iter().any(|tool| tool.get("subagent").is_some()))
}

fn offers_tools(value: &Value) -> bool {
    value
        .pointer("/dsh/tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| !tools.is_empty())
}

/// The steps of every turn of the fake's script.
fn script_steps(value: &Value) -> impl Iterator<Item = &Value> {
    value
        .pointer("/fake/turns")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|turn| turn.get("steps").and_then(Value::as_array))
        .flatten()
}

/// Whether `step` calls host tools, at least `calls` of them in one round (a `call` step
/// is one, a `parallel` step lists its calls).
fn is_call(step: &Value, calls: usize) -> bool {
    if step.get("call").is_some() {
        return calls <= 1;
    }
    step.get("parallel")
        .and_then(Value::as_array)
        .is_some_and(|parallel| parallel.len() >= calls)
}

/// Whether a base scenario's chat launches the server: its expectations do not say that
/// no prompt was sent (a generation refused before any launch, such as an invalid tool
/// catalogue or an unknown saved model).
fn launches(value: &Value) -> bool {
    value
        .pointer("/expect/wire/prompts")
        .and_then(Value::as_u64)
        != Some(0)
}

/// One planned run.
#[derive(Debug, Clone)]
pub struct PlannedRun {
    /// The base scenario's file.
    pub base: PathBuf,
    /// The fault picked.
    pub fault: &'static FaultRow,
    /// The frame a server fault strikes at (`None` for other faults).
    pub at_frame: Option<u64>,
    /// The `tools/call` an MCP fault strikes at (`None` for other faults).
    pub at_call: Option<u64>,
    /// The run's scenario, as a file would hold it.
    pub yaml: String,
}

/// Plans run `index` of the chaos run seeded `seed`.
pub fn plan(seed: u64, index: u64, bases: &[Base], rows: &[&'static FaultRow]) -> PlannedRun {
    let mut rng = SplitMix64::for_run(seed, index);
    let fault = rows[rng.below(rows.len() as u64) as usize];
    // A fault that strikes only at a tool round, or only where the server is launched,
    // gets a base that has one (when any does).
    let fitting: Vec<&Base> = bases
        .iter()
        .filter(|b| fits(fault.needs, &b.value))
        .collect();
    let pool: Vec<&Base> = if fitting.is_empty() {
        bases.iter().collect()
    } else {
        fitting
    };
    let base = pool[rng.below(pool.len() as u64) as usize];
    let mut value = base.value.clone();
    apply(fault, &mut value, &mut rng);
    let secret = format!("chaos-secret-{seed:x}-{index}-{:016x}", rng.next_u64());
    entry(&mut value, &["fake"])["planted_secret"] = json!(secret);
    let knobs = entry(&mut value, &["dsh", "adapter"]);
    for (key, most) in [
        ("timeout_ms", CHAOS_TIMEOUT_MS),
        ("tool_timeout_ms", CHAOS_TOOL_TIMEOUT_MS),
    ] {
        let own = knobs.get(key).and_then(Value::as_u64).unwrap_or(most);
        knobs[key] = json!(own.min(most));
    }
    knobs["shutdown_grace_ms"] = json!(CHAOS_SHUTDOWN_GRACE_MS);
    // `await_exits` waits for exits the server journals, which a killed or faulted server
    // never writes: it is the base's own expectation, not a chaos one.
    if let Some(chat) = value.pointer_mut("/dsh/chat").and_then(Value::as_array_mut) {
        for entry in chat.iter_mut().filter_map(Value::as_object_mut) {
            entry.remove("await_exits");
        }
    }
    let name = format!(
        "chaos seed {seed} run {index}: {} on {}",
        fault.name,
        base.path.display()
    );
    if let Some(object) = value.as_object_mut() {
        object.insert("name".into(), json!(name));
        object.insert("covers".into(), json!(["B04"]));
        object.insert(
            "simulator_only".into(),
            json!(crate::scenario::CHAOS_SIMULATOR_ONLY),
        );
        // The fault is the fake's script: a real server would run the base unfaulted.
        object.insert(
            "fake_only".into(),
            json!("the fault is the fake's script: a real agent would run the base unfaulted"),
        );
        object.insert(
            "expect".into(),
            json!({ "chaos": { "terminal_bound_ms": TERMINAL_BOUND_MS } }),
        );
    }
    let at_frame = value
        .pointer("/fake/faults/0/at_frame")
        .and_then(Value::as_u64);
    let at_call = value
        .pointer("/fake/mcp_client/fault/call")
        .and_then(Value::as_u64);
    PlannedRun {
        base: base.path.clone(),
        fault,
        at_frame,
        at_call,
        yaml: to_yaml(&value, seed, index),
    }
}

/// The top-level keys in the order a scenario file lists them.
const KEY_ORDER: [&str; 11] = [
    "name",
    "covers",
    "platforms",
    "simulator_only",
    "known_failure",
    "fake_only",
    "time_bound_secs",
    "fake",
    "install",
    "dsh",
    "expect",
];

/// A scenario value as a scenario file: the schema line, then one top-level key a line,
/// each value as JSON (which is YAML).
pub fn to_yaml(value: &Value, seed: u64, index: u64) -> String {
    let mut out = String::from("# yaml-language-server: $schema=../scenario.schema.json\n");
    out.push_str(&format!(
        "# Written by `dsh-sim chaos --seed {seed} --run {index}`; judged by the chaos \
         invariants (expect.chaos).\n"
    ));
    let Some(object) = value.as_object() else {
        return out;
    };
    let known = KEY_ORDER.iter().filter_map(|k| Some((*k, object.get(*k)?)));
    let others = object
        .iter()
        .filter(|(k, _)| !KEY_ORDER.contains(&k.as_str()))
        .map(|(k, v)| (k.as_str(), v));
    for (key, value) in known.chain(others) {
        out.push_str(&format!("{key}: {value}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chaos::catalogue::CATALOGUE;

    #[test]
    fn a_planned_run_parses_as_a_chaos_scenario() -> Result<(), String> {
        let base = Base {
            path: PathBuf::from("streaming/x.yaml"),
            value: json!({"name": "x", "covers": [], "dsh": {"chat": [{"user": "hi"}]},
                          "expect": {"finish": "stop"}}),
        };
        let rows: Vec<&FaultRow> = CATALOGUE.iter().collect();
        for index in 0..40 {
            let run = plan(9, index, std::slice::from_ref(&base), &rows);
            let scenario = crate::scenario::parse(&run.yaml, Path::new("chaos.yaml"))
                .map_err(|e| format!("{e}\n{}", run.yaml))?;
            assert!(scenario.expect.chaos.is_some());
            assert!(scenario.expect.finish.is_none());
            assert!(scenario.fake.planted_secret.is_some());
            assert_eq!(
                plan(9, index, std::slice::from_ref(&base), &rows).yaml,
                run.yaml
            );
        }
        Ok(())
    }

    /// An install fault never draws a base whose chat launches nothing (the fault would
    /// strike the launch after the chat, the one meant to repair it: chaos seed
    /// 1796184962 run 789), a reordered history only a base with a round of two calls
    /// (it struck 0 times in 184 on one-call rounds); other faults still draw any base.
    #[test]
    fn a_fault_draws_a_base_it_can_strike() {
        let refused = Base {
            path: PathBuf::from("tool_calls/refused.yaml"),
            value: json!({"name": "r", "covers": [], "dsh": {"chat": [{"user": "hi"}]},
                          "expect": {"error": "ACP_TOOL_CATALOG_INVALID", "wire": {"prompts": 0}}}),
        };
        let launched = Base {
            path: PathBuf::from("streaming/x.yaml"),
            value: json!({"name": "x", "covers": [], "dsh": {"chat": [{"user": "hi"}]},
                          "expect": {"finish": "stop"}}),
        };
        let parallel = Base {
            path: PathBuf::from("tool_calls/parallel.yaml"),
            value: json!({"name": "p", "covers": [],
                          "fake": {"turns": [{"steps": [{"parallel": [{"tool": "a"}, {"tool": "b"}]}]}]},
                          "dsh": {"tools": [{"name": "a"}, {"name": "b"}], "chat": [{"user": "hi"}]},
                          "expect": {"finish": "stop"}}),
        };
        let bases = [refused, launched, parallel];
        let rows: Vec<&FaultRow> = CATALOGUE.iter().collect();
        let mut others_drew_it = false;
        for index in 0..400 {
            let run = plan(11, index, &bases, &rows);
            let on_refused = run.base == bases[0].path;
            if run.fault.name == "history_reorder_results" {
                assert_eq!(
                    run.base, bases[2].path,
                    "run {index}: a reorder on one call"
                );
            }
            if run.fault.family == "install" {
                assert!(
                    !on_refused,
                    "run {index}: {} on a base that never launches",
                    run.fault.name
                );
            } else {
                others_drew_it |= on_refused;
            }
        }
        assert!(
            others_drew_it,
            "no other fault drew the base that launches nothing"
        );
    }
}
