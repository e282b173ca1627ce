//! Judging `expect.wire` on the fake's journal: only what crossed the wire (and what the
//! fake journaled about it, such as a native step it withheld), never the adapter's
//! internals. Script failures the fake journaled (an unmet `expect_result`, an
//! unmatched prompt) and an `initialize` asking for an ACP version other than 1 always
//! fail the scenario.

pub mod facts;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::scenario::{CapabilityExpectation, McpServersExpectation, WireExpectations};
pub use facts::{ProcessFacts, bridge_urls, extract};

/// Every `expect.wire` check that does not hold, plus every script failure.
pub fn check_wire(
    expect: Option<&WireExpectations>,
    processes: &[ProcessFacts],
    scratch_root: &Path,
) -> Vec<String> {
    let mut failures: Vec<String> = processes
        .iter()
        .flat_map(|p| p.script_failures.iter().cloned())
        .collect();
    let Some(expect) = expect else {
        return failures;
    };
    let all = |pick: fn(&ProcessFacts) -> &Vec<String>| -> Vec<String> {
        processes
            .iter()
            .flat_map(|p| pick(p).iter().cloned())
            .collect()
    };
    if let Some(expected) = expect.processes {
        compare(
            &mut failures,
            "server processes started",
            &expected,
            &processes.len(),
        );
    }
    if let Some(expected) = &expect.sessions_per_process {
        let actual: Vec<usize> = processes
            .iter()
            .map(|p| p.methods.iter().filter(|m| *m == "session/new").count())
            .collect();
        compare(
            &mut failures,
            "session/new per server process",
            expected,
            &actual,
        );
    }
    if let Some(expected) = &expect.prompts_lack {
        let prompts = all(|p| &p.prompts);
        for (i, (texts, prompt)) in expected.iter().zip(&prompts).enumerate() {
            for text in texts.iter().filter(|text| prompt.contains(text.as_str())) {
                failures.push(format!("wire: session/prompt {} contains {text:?}", i + 1));
            }
        }
        if expected.len() != prompts.len() {
            failures.push(format!(
                "wire: prompts_lack lists {} prompt(s), {} session/prompt were sent",
                expected.len(),
                prompts.len()
            ));
        }
    }
    if let Some(expected) = &expect.acp_methods {
        let actual: Vec<Vec<String>> = processes.iter().map(|p| p.methods.clone()).collect();
        compare(
            &mut failures,
            "client methods per server process",
            expected,
            &actual,
        );
    }
    for (method, expected) in &expect.method_counts {
        let actual = processes
            .iter()
            .flat_map(|p| p.methods.iter())
            .filter(|m| *m == method)
            .count();
        compare(&mut failures, &format!("{method} count"), expected, &actual);
    }
    for (kind, expected) in &expect.update_counts {
        let actual = processes
            .iter()
            .flat_map(|p| p.update_kinds.iter())
            .filter(|k| *k == kind)
            .count();
        compare(&mut failures, &format!("{kind} updates"), expected, &actual);
    }
    for text in &expect.frames_lack {
        if let Some(index) = processes
            .iter()
            .position(|p| p.frames.iter().any(|frame| frame.contains(text.as_str())))
        {
            failures.push(format!(
                "wire: an ACP frame of server process {} contains {text:?}",
                index + 1
            ));
        }
    }
    if let Some(expected) = &expect.native_actions {
        compare(
            &mut failures,
            "native actions (as the fake journaled their real outcome)",
            expected,
            &all(|p| &p.native_actions),
        );
    }
    if let Some(expected) = expect.prompts {
        let actual = processes.iter().map(|p| p.prompts.len()).sum::<usize>();
        compare(&mut failures, "session/prompt requests", &expected, &actual);
    }
    if let Some(expected) = &expect.prompts_contain {
        check_prompts_contain(expected, &all(|p| &p.prompts), &mut failures);
    }
    if let Some(expected) = &expect.models_selected {
        compare(
            &mut failures,
            "models selected",
            expected,
            &all(|p| &p.models_selected),
        );
    }
    if let Some(expected) = &expect.authenticate {
        compare(
            &mut failures,
            "authenticate methodIds",
            expected,
            &all(|p| &p.authenticate),
        );
    }
    if let Some(expected) = &expect.permission_answers {
        let actual = all(|p| &p.permission_answers);
        compare(&mut failures, "permission answers", expected, &actual);
    }
    if let Some(expected) = expect.mcp_tool_calls {
        let actual = processes.iter().map(|p| p.mcp_tool_calls).sum::<usize>();
        compare(&mut failures, "MCP tools/call requests", &expected, &actual);
    }
    if let Some(expected) = &expect.mcp_tool_results {
        let actual: Vec<_> = processes
            .iter()
            .flat_map(|p| p.mcp_tool_results.iter().copied())
            .collect();
        compare(&mut failures, "MCP tools/call results", expected, &actual);
    }
    if let Some(expected) = &expect.mcp_tool_results_any_order {
        let sorted = |kinds: &mut Vec<String>| kinds.sort_unstable();
        let mut expected: Vec<String> = expected.iter().map(ToString::to_string).collect();
        let mut actual: Vec<String> = processes
            .iter()
            .flat_map(|p| p.mcp_tool_results.iter().map(ToString::to_string))
            .collect();
        sorted(&mut expected);
        sorted(&mut actual);
        compare(
            &mut failures,
            "MCP tools/call results (any order)",
            &expected,
            &actual,
        );
    }
    if let Some(expected) = &expect.exits {
        let actual: Vec<String> = processes
            .iter()
            .map(|p| p.exit_reason.clone().unwrap_or_else(|| "none".to_owned()))
            .collect();
        compare(&mut failures, "server process exits", expected, &actual);
    }
    for (tool, text) in &expect.mcp_results_contain {
        let results: Vec<&String> = processes
            .iter()
            .flat_map(|p| p.mcp_call_results.iter())
            .filter(|(name, _)| is_exported_name_of(name, tool))
            .map(|(_, result)| result)
            .collect();
        if results.is_empty() || results.iter().any(|r| !r.contains(text.as_str())) {
            failures.push(format!(
                "MCP results of {tool}: expected each to contain {text:?}, observed {results:?}"
            ));
        }
    }
    if let Some(expected) = &expect.mcp_exchanges {
        compare(
            &mut failures,
            "MCP exchanges",
            expected,
            &all(|p| &p.mcp_exchanges),
        );
    }
    if let Some(expected) = &expect.mcp_tools_listed {
        let listed: Vec<Vec<String>> = processes
            .iter()
            .flat_map(|p| p.mcp_tools_listed.iter().cloned())
            .collect();
        // A bridge exports `name` or `name_<12 hex>` (a schema-qualified name).
        let same = listed.len() == expected.len()
            && listed.iter().zip(expected).all(|(names, tools)| {
                names.len() == tools.len()
                    && names
                        .iter()
                        .zip(tools)
                        .all(|(name, tool)| is_exported_name_of(name, tool))
            });
        if !same {
            failures.push(format!(
                "wire: MCP tools/list answers' tool names: expected {expected:?}, observed \
                 {listed:?}"
            ));
        }
    }
    if let Some(expected) = expect.client_capabilities {
        for caps in processes.iter().flat_map(|p| p.client_capabilities.iter()) {
            check_capabilities(expected, caps, &mut failures);
        }
    }
    if let Some(expected) = expect.mcp_servers {
        // Which process each bridge token was given to: a token is fresh per turn (one
        // process may see it twice, when session/new is retried after authenticate).
        let mut token_owners: BTreeMap<String, usize> = BTreeMap::new();
        for (index, process) in processes.iter().enumerate() {
            // On one process a token may come back only for the retry of session/new after
            // authenticate; every other session/new (a pooled process's next turn) needs a
            // fresh one.
            let mut seen_here: BTreeMap<String, usize> = BTreeMap::new();
            for servers in &process.session_new_mcp_servers {
                match check_mcp_servers(expected, servers) {
                    Ok(Some(token)) => {
                        let repeats = seen_here.entry(token.clone()).or_insert(0);
                        *repeats += 1;
                        if *repeats > 1 + process.authenticate.len() {
                            failures.push(format!(
                                "session/new mcpServers: server process {} got the same bearer token for two turns (it must be fresh per turn)",
                                index + 1
                            ));
                        }
                        let owner = *token_owners.entry(token).or_insert(index);
                        if owner != index {
                            failures.push(format!(
                                "session/new mcpServers: server processes {} and {} got the same bearer token (it must be fresh per turn)",
                                owner + 1,
                                index + 1
                            ));
                        }
                    }
                    Ok(None) => {}
                    Err(why) => failures.push(format!("session/new mcpServers: {why}")),
                }
            }
        }
    }
    if let Some(expected) = expect.private_cwd {
        check_private_cwd(expected, processes, scratch_root, &mut failures);
    }
    check_environment(expect, processes, &mut failures);
    if let Some(expected) = &expect.disabled_tools {
        check_disabled_tools(expected, processes, &mut failures);
    }
    if let Some(expected) = &expect.slash_commands {
        compare(
            &mut failures,
            "slash commands the fake found in the prompts and ran",
            expected,
            &all(|p| &p.slash_commands),
        );
    }
    if let Some(expected) = &expect.settings_written {
        compare(
            &mut failures,
            "writes of the server's settings.json",
            expected,
            &all(|p| &p.settings_written),
        );
    }
    if let Some(expected) = &expect.native_steps_withheld {
        compare(
            &mut failures,
            "native steps the fake withheld",
            expected,
            &all(|p| &p.native_steps_withheld),
        );
    }
    failures
}

/// `disabled_tools`: every session the client opened (`session/new`, `session/load`,
/// `session/resume`, on any process) carried exactly `expected` as
/// `_meta.agy.disabledTools`, and there was at least one.
fn check_disabled_tools(
    expected: &[String],
    processes: &[ProcessFacts],
    failures: &mut Vec<String>,
) {
    let expected = Value::from(expected);
    let mut opened = 0;
    for (index, process) in processes.iter().enumerate() {
        for (method, sent) in &process.session_disabled_tools {
            opened += 1;
            if *sent != expected {
                failures.push(format!(
                    "wire: {method} {opened} (server process {}) carried _meta.agy.disabledTools {sent}, expected {expected}",
                    index + 1
                ));
            }
        }
    }
    if opened == 0 {
        failures.push("wire: disabled_tools: no session was opened".to_owned());
    }
}

/// The variable a scenario's name stands for on this system: `HOME`, the user's home,
/// is `USERPROFILE` on Windows, where names are also matched without case.
fn native_variable(name: &str) -> &str {
    if cfg!(windows) && name == "HOME" {
        "USERPROFILE"
    } else {
        name
    }
}

/// `env_absent` / `env_present`: which variable names every server process received.
fn check_environment(
    expect: &WireExpectations,
    processes: &[ProcessFacts],
    failures: &mut Vec<String>,
) {
    if (!expect.env_absent.is_empty() || !expect.env_present.is_empty()) && processes.is_empty() {
        failures.push("environment checks: no server process started".to_owned());
    }
    for (index, process) in processes.iter().enumerate() {
        let has = |name: &String| {
            let name = native_variable(name);
            process.env_names.iter().any(|n| {
                if cfg!(windows) {
                    n.eq_ignore_ascii_case(name)
                } else {
                    n == name
                }
            })
        };
        for name in expect.env_absent.iter().filter(|n| has(n)) {
            failures.push(format!(
                "server process {} received the variable {name}, which must not reach the server",
                index + 1
            ));
        }
        for name in expect.env_present.iter().filter(|n| !has(n)) {
            failures.push(format!(
                "server process {} did not receive the variable {name}",
                index + 1
            ));
        }
    }
}

fn compare<T: PartialEq + std::fmt::Debug>(
    failures: &mut Vec<String>,
    what: &str,
    expected: &T,
    actual: &T,
) {
    if expected != actual {
        failures.push(format!(
            "wire: {what}: expected {expected:?}, observed {actual:?}"
        ));
    }
}

fn check_prompts_contain(expected: &[Vec<String>], prompts: &[String], failures: &mut Vec<String>) {
    if expected.len() != prompts.len() {
        failures.push(format!(
            "wire: prompts_contain lists {} prompt(s), {} session/prompt were sent",
            expected.len(),
            prompts.len()
        ));
    }
    for (i, (texts, prompt)) in expected.iter().zip(prompts).enumerate() {
        for text in texts.iter().filter(|text| !prompt.contains(text.as_str())) {
            failures.push(format!(
                "wire: session/prompt {} does not contain {text:?}",
                i + 1
            ));
        }
    }
}

fn check_capabilities(expected: CapabilityExpectation, caps: &Value, failures: &mut Vec<String>) {
    let flag = |v: Option<&Value>| v.and_then(Value::as_bool).unwrap_or(false);
    let fs = caps.get("fs");
    let fs_on = flag(fs.and_then(|f| f.get("readTextFile")))
        || flag(fs.and_then(|f| f.get("writeTextFile")));
    let terminal_on = flag(caps.get("terminal"));
    if let Some(fs) = expected.fs
        && fs != fs_on
    {
        failures.push(format!(
            "wire: initialize advertised fs {fs_on}, expected {fs} ({caps})"
        ));
    }
    if let Some(terminal) = expected.terminal
        && terminal != terminal_on
    {
        failures.push(format!(
            "wire: initialize advertised terminal {terminal_on}, expected {terminal} ({caps})"
        ));
    }
}

/// `bridge`: exactly one `http` server at `http://127.0.0.1:<port>/mcp` with exactly one
/// header, `Authorization: Bearer <64 hex>` (the fake's journal shows it as
/// `Bearer <redacted len=64 hex fp=XXXXXXXX>`); returns the token's fingerprint. `none`:
/// no server.
fn check_mcp_servers(
    expected: McpServersExpectation,
    servers: &Value,
) -> Result<Option<String>, String> {
    let list = match servers {
        Value::Null => Vec::new(),
        Value::Array(list) => list.clone(),
        other => return Err(format!("not a list: {other}")),
    };
    match expected {
        McpServersExpectation::None if list.is_empty() => Ok(None),
        McpServersExpectation::None => Err(format!("expected none, got {servers}")),
        McpServersExpectation::Bridge => match list.as_slice() {
            [server] => check_bridge_descriptor(server).map(Some),
            _ => Err(format!(
                "expected exactly one bridge, got {} server(s)",
                list.len()
            )),
        },
    }
}

/// A 256-bit hex token's fingerprint, from the token itself or from the fake's journal
/// form `<redacted len=64 hex fp=XXXXXXXX>`.
fn token_fingerprint(token: &str) -> Option<String> {
    let is_hex = |text: &str| text.bytes().all(|b| b.is_ascii_hexdigit());
    if token.len() == 64 && is_hex(token) {
        return Some(token.to_owned());
    }
    let fingerprint = token
        .strip_prefix("<redacted len=64 hex fp=")?
        .strip_suffix('>')?;
    (fingerprint.len() == 8 && is_hex(fingerprint)).then(|| fingerprint.to_owned())
}

fn check_bridge_descriptor(server: &Value) -> Result<String, String> {
    if server.get("type").and_then(Value::as_str) != Some("http") {
        return Err("the bridge is not of type `http`".to_owned());
    }
    let url = server
        .get("url")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let on_loopback = url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .is_some_and(|port| port.parse::<u16>().is_ok());
    if !on_loopback {
        return Err(format!(
            "the bridge URL {url:?} is not http://127.0.0.1:<port>/mcp"
        ));
    }
    let headers = server
        .get("headers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let [header] = headers.as_slice() else {
        return Err(format!(
            "expected exactly one header, got {}",
            headers.len()
        ));
    };
    let name = header
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let value = header
        .get("value")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let token = value.strip_prefix("Bearer ").and_then(token_fingerprint);
    let (true, Some(token)) = (name.eq_ignore_ascii_case("authorization"), token) else {
        // Never echo the token itself.
        return Err(format!(
            "the header is not `Authorization: Bearer <64 hex>` (name {name:?}, a value of {} chars)",
            value.len()
        ));
    };
    Ok(token)
}

fn check_private_cwd(
    expected: bool,
    processes: &[ProcessFacts],
    scratch_root: &Path,
    failures: &mut Vec<String>,
) {
    let root = scratch_root
        .canonicalize()
        .unwrap_or_else(|_| scratch_root.to_owned());
    // The process's own cwd, and the `cwd` of every `session/new`: the latter is what
    // scopes the real server's workspace (C62).
    let process_cwds = processes
        .iter()
        .filter_map(|p| p.cwd.as_deref())
        .map(|cwd| ("server cwd", cwd));
    let session_cwds = processes
        .iter()
        .flat_map(|p| &p.session_new_cwds)
        .map(|cwd| ("session/new cwd", cwd.as_str()));
    for (what, cwd) in process_cwds.chain(session_cwds) {
        let inside = Path::new(cwd).is_absolute()
            && (Path::new(cwd).starts_with(&root) || Path::new(cwd).starts_with(scratch_root));
        if inside != expected {
            failures.push(format!(
                "wire: {what} {cwd:?} is {}under the scratch root {}",
                if inside { "" } else { "not " },
                root.display()
            ));
        }
    }
}

/// Whether `name` (as the server called it) is DSH's `tool`: the name itself, or the
/// bridge's exported form `<tool>_<12 hex>`.
fn is_exported_name_of(name: &str, tool: &str) -> bool {
    name == tool
        || name
            .strip_prefix(tool)
            .and_then(|rest| rest.strip_prefix('_'))
            .is_some_and(|suffix| {
                suffix.len() == 12 && suffix.bytes().all(|b| b.is_ascii_hexdigit())
            })
}
