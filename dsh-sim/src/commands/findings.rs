//! `dsh-sim findings <ARTIFACTS_DIR>`: what a run against a real agent shows about it, read
//! from the journals its artefacts keep (every scenario's `model-api.jsonl`, the scripted
//! model API's journal, and its `journal/*.jsonl`, the client-side ACP journal), one line
//! per finding, for `docs/antigravity-1.3.0.md`: how the agent names a bridge (MCP) tool to
//! the model, its native tools, its permission requests, what it sends around a tool
//! result, whether it retries, the models it asks for and the API key's shape (never the
//! value: the model API journals keys by shape only). This module owns the walk over the
//! folder, the extraction from parsed journals and the lines.

pub use crate::runner::judge::model_api::is_bridge_name;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use fake_antigravity::journal::JournalEntry as AcpEntry;
use fake_gemini_api::JournalEntry as ModelEntry;
use fake_gemini_api::journal::{ApiMethod, JournalContent, PartKind, RequestEntry};
use serde_json::Value;

#[cfg(test)]
mod tests;

/// At most this many characters of a permission title's shape.
const TITLE_CHARS: usize = 80;

/// What one scenario's artefacts hold.
#[derive(Debug, Default)]
pub struct ScenarioJournals {
    /// The artefact folder, relative to the root.
    pub name: String,
    /// The model API's journal (empty when there was none).
    pub model_api: Vec<ModelEntry>,
    /// The client-side ACP journal, one list per process.
    pub acp: Vec<Vec<AcpEntry>>,
}

/// Every scenario folder under `root` with a journal, and the journals that could not be
/// read (as `path: error`).
pub fn collect(root: &Path) -> (Vec<ScenarioJournals>, Vec<String>) {
    let mut scenarios: BTreeMap<PathBuf, ScenarioJournals> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(error) => {
                problems.push(format!("{}: {error}", folder.display()));
                continue;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if name == "journal" && path.is_dir() {
                match fake_antigravity::journal::read_dir(&path) {
                    Ok(acp) => scenario(&mut scenarios, root, &folder).acp = acp,
                    Err(error) => problems.push(format!("{}: {error}", path.display())),
                }
            } else if path.is_dir() {
                folders.push(path);
            } else if name == "model-api.jsonl" {
                match fake_gemini_api::read_journal(&path) {
                    Ok(journal) => scenario(&mut scenarios, root, &folder).model_api = journal,
                    Err(error) => problems.push(error.to_string()),
                }
            }
        }
    }
    (scenarios.into_values().collect(), problems)
}

fn scenario<'a>(
    scenarios: &'a mut BTreeMap<PathBuf, ScenarioJournals>,
    root: &Path,
    folder: &Path,
) -> &'a mut ScenarioJournals {
    scenarios
        .entry(folder.to_path_buf())
        .or_insert_with(|| ScenarioJournals {
            name: crate::scenario::slash_path(folder.strip_prefix(root).unwrap_or(folder)),
            ..ScenarioJournals::default()
        })
}

/// The findings' lines: `finding: <topic>: <what> (<N> scenarios)`, by topic, each what
/// with the number of scenarios that showed it.
pub fn findings(scenarios: &[ScenarioJournals]) -> Vec<String> {
    let mut seen: BTreeMap<(&'static str, String), BTreeSet<&str>> = BTreeMap::new();
    let mut natives: BTreeSet<String> = BTreeSet::new();
    let mut declaring_natives = BTreeSet::new();
    for scenario in scenarios {
        let facts = scenario_facts(scenario);
        if !facts.natives.is_empty() {
            declaring_natives.insert(scenario.name.as_str());
        }
        natives.extend(facts.natives);
        for fact in facts.facts {
            seen.entry(fact).or_default().insert(scenario.name.as_str());
        }
    }
    let mut lines = Vec::new();
    let with_model = scenarios.iter().filter(|s| !s.model_api.is_empty()).count();
    if with_model > 0 {
        let list = if natives.is_empty() {
            "none".to_owned()
        } else {
            natives.into_iter().collect::<Vec<_>>().join(", ")
        };
        let count = if declaring_natives.is_empty() {
            with_model
        } else {
            declaring_natives.len()
        };
        lines.push(line("native-tools", &list, count));
    }
    for ((topic, what), names) in seen {
        lines.push(line(topic, &what, names.len()));
    }
    // The native tools first, then by topic as TOPICS orders them.
    lines.sort_by_key(|l| {
        TOPICS
            .iter()
            .position(|t| l.starts_with(&format!("finding: {t}: ")))
            .unwrap_or(TOPICS.len())
    });
    lines
}

/// The topics, in the order their lines come.
const TOPICS: &[&str] = &[
    "native-tools",
    "mcp-tool-naming",
    "permission-asked",
    "permission-options",
    "permission-title",
    "permission-tool-call-id",
    "permission-meta-mcp",
    "tool-result",
    "retry",
    "model",
    "api-key-shape",
];

fn line(topic: &str, what: &str, scenarios: usize) -> String {
    let noun = if scenarios == 1 {
        "scenario"
    } else {
        "scenarios"
    };
    format!("finding: {topic}: {what} ({scenarios} {noun})")
}

/// What one scenario shows.
#[derive(Debug, Default)]
struct Facts {
    natives: BTreeSet<String>,
    facts: BTreeSet<(&'static str, String)>,
}

fn scenario_facts(scenario: &ScenarioJournals) -> Facts {
    let mut facts = Facts::default();
    let servers = mcp_server_names(&scenario.acp);
    let utility: BTreeSet<u64> = scenario
        .model_api
        .iter()
        .filter_map(|entry| match entry {
            ModelEntry::Utility { seq, .. } => Some(*seq),
            _ => None,
        })
        .collect();
    let requests: Vec<&RequestEntry> = scenario
        .model_api
        .iter()
        .filter_map(|entry| match entry {
            ModelEntry::Request(request) => Some(request),
            _ => None,
        })
        .collect();
    let mut bridge = BTreeSet::new();
    for request in &requests {
        for tool in &request.tools {
            if is_bridge_name(&tool.name) {
                bridge.insert(tool.name.clone());
                let naming = format!("{}<tool>_<hash>", bridge_prefix(&tool.name, &servers));
                facts.facts.insert(("mcp-tool-naming", naming));
            } else {
                facts.natives.insert(tool.name.clone());
            }
        }
        let kind = match request.method {
            ApiMethod::CountTokens => "count-tokens",
            _ if utility.contains(&request.seq) => "utility",
            _ => "main",
        };
        facts
            .facts
            .insert(("model", format!("{} for {kind} requests", request.model)));
        let key = match &request.api_key {
            Some(shape) => key_shape(shape),
            None => "none".to_owned(),
        };
        facts.facts.insert(("api-key-shape", key));
    }
    let main: Vec<&RequestEntry> = requests
        .iter()
        .copied()
        .filter(|r| r.method != ApiMethod::CountTokens && !utility.contains(&r.seq))
        .collect();
    if !main.is_empty() {
        let retried = main
            .iter()
            .enumerate()
            .any(|(i, a)| main.iter().skip(i + 1).any(|b| a.contents == b.contents));
        let retry = if retried {
            "a main request sent again with identical contents"
        } else {
            "none (no two main requests with identical contents)"
        };
        facts.facts.insert(("retry", retry.to_owned()));
    }
    facts.facts.extend(tool_result_facts(&main));
    let called_bridge = scenario.model_api.iter().any(|entry| {
        matches!(entry, ModelEntry::Response { function_calls, .. }
            if function_calls.iter().any(|name| bridge.contains(name)))
    });
    facts
        .facts
        .extend(permission_facts(&scenario.acp, &bridge, called_bridge));
    facts
}

/// What the agent puts before the bridge's MCP name: up to and including the first MCP
/// server name of `session/new` (and its separator) the declared name holds, or nothing.
fn bridge_prefix(name: &str, servers: &BTreeSet<String>) -> String {
    servers
        .iter()
        .filter_map(|server| {
            ["__", "_", "."].iter().find_map(|sep| {
                let marker = format!("{server}{sep}");
                name.find(&marker)
                    .filter(|at| *at == 0 || name[..*at].ends_with(['_', '.']))
                    .map(|at| format!("{}{marker}", &name[..at]))
            })
        })
        .min_by_key(String::len)
        .unwrap_or_default()
}

/// The MCP server names the client sent in `session/new` (`params.mcpServers[].name`).
fn mcp_server_names(acp: &[Vec<AcpEntry>]) -> BTreeSet<String> {
    acp.iter()
        .flatten()
        .filter_map(|entry| match entry {
            AcpEntry::AcpIn { frame } if method(frame) == Some("session/new") => frame
                .pointer("/params/mcpServers")
                .and_then(Value::as_array),
            _ => None,
        })
        .flatten()
        .filter_map(|server| server.get("name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

fn method(frame: &Value) -> Option<&str> {
    frame.get("method").and_then(Value::as_str)
}

fn key_shape(shape: &fake_gemini_api::journal::ApiKeyShape) -> String {
    let place = match (&shape.header, &shape.query) {
        (Some(header), _) => format!("header {header}"),
        (None, Some(query)) => format!("query parameter {query}"),
        (None, None) => "unknown place".to_owned(),
    };
    format!("{place}, {} characters", shape.chars)
}

/// Each content that first carries a tool result (a `functionResponse` part the previous
/// main request did not have): its role and parts, the content before it, and what the
/// request sends after it.
fn tool_result_facts(main: &[&RequestEntry]) -> Vec<(&'static str, String)> {
    let mut facts = Vec::new();
    let mut known = 0;
    for request in main {
        let contents = &request.contents;
        for (index, content) in contents.iter().enumerate().skip(known) {
            if !content
                .parts
                .iter()
                .any(|p| p.kind == PartKind::FunctionResponse)
            {
                continue;
            }
            let before = match index.checked_sub(1).and_then(|i| contents.get(i)) {
                Some(previous) => describe(previous),
                None => "nothing".to_owned(),
            };
            let after: Vec<String> = contents.iter().skip(index + 1).map(describe).collect();
            let after = if after.is_empty() {
                "nothing".to_owned()
            } else {
                after.join(", ")
            };
            facts.push((
                "tool-result",
                format!(
                    "role {} with {}; before it {before}; after it {after}",
                    content.role,
                    kinds(content)
                ),
            ));
        }
        known = contents.len();
    }
    facts
}

/// A content as `role[kind, kind…]`.
fn describe(content: &JournalContent) -> String {
    format!("{}[{}]", content.role, kinds(content))
}

/// A content's part kinds, runs of one kind counted (`function_call x2`).
fn kinds(content: &JournalContent) -> String {
    let mut runs: Vec<(PartKind, usize)> = Vec::new();
    for part in &content.parts {
        match runs.last_mut() {
            Some((kind, count)) if *kind == part.kind => *count += 1,
            _ => runs.push((part.kind, 1)),
        }
    }
    runs.iter()
        .map(|(kind, count)| {
            let name = part_kind_name(*kind);
            if *count == 1 {
                name.to_owned()
            } else {
                format!("{name} x{count}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn part_kind_name(kind: PartKind) -> &'static str {
    match kind {
        PartKind::Text => "text",
        PartKind::Thought => "thought",
        PartKind::FunctionCall => "function_call",
        PartKind::FunctionResponse => "function_response",
        PartKind::InlineData => "inline_data",
        PartKind::Other => "other",
    }
}

/// The agent's `session/request_permission` requests: whether it asked for a bridge tool
/// it called, and each request's options, title, tool call id and `_meta.mcp`, by whether
/// it was for a bridge tool.
fn permission_facts(
    acp: &[Vec<AcpEntry>],
    bridge: &BTreeSet<String>,
    called_bridge: bool,
) -> Vec<(&'static str, String)> {
    let mut facts = Vec::new();
    let mut asked_bridge = false;
    for entry in acp.iter().flatten() {
        let AcpEntry::AcpOut { frame } = entry else {
            continue;
        };
        if method(frame) != Some("session/request_permission") {
            continue;
        }
        let params = frame.get("params").unwrap_or(&Value::Null);
        let tool_call = params.get("toolCall").unwrap_or(&Value::Null);
        let meta_mcp = ["/_meta/mcp", "/toolCall/_meta/mcp"]
            .iter()
            .any(|p| params.pointer(p).is_some());
        let text = tool_call.to_string();
        let for_bridge = meta_mcp || bridge.iter().any(|name| text.contains(name.as_str())) || {
            words(&text).any(is_bridge_name)
        };
        asked_bridge |= for_bridge;
        let whom = if for_bridge { "bridge" } else { "native" };
        let options: Vec<String> = params
            .get("options")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|option| {
                let field = |key| option.get(key).and_then(Value::as_str).unwrap_or("?");
                format!("{}/{}", field("optionId"), field("kind"))
            })
            .collect();
        facts.push((
            "permission-options",
            format!("{whom} tool: {}", options.join(", ")),
        ));
        let title = tool_call.get("title").and_then(Value::as_str);
        facts.push((
            "permission-title",
            format!("{whom} tool: {}", title.map_or("none".to_owned(), shape)),
        ));
        let id = tool_call.get("toolCallId").and_then(Value::as_str);
        facts.push((
            "permission-tool-call-id",
            format!("{whom} tool: {}", id.map_or("none".to_owned(), shape)),
        ));
        let meta = if meta_mcp { "present" } else { "absent" };
        facts.push((
            "permission-meta-mcp",
            format!("{whom} tool: _meta.mcp {meta}"),
        ));
    }
    if called_bridge && !acp.is_empty() {
        let asked = if asked_bridge {
            "yes, for a bridge tool the model called"
        } else {
            "no, not for a bridge tool the model called"
        };
        facts.push(("permission-asked", asked.to_owned()));
    }
    facts
}

/// The runs of `[A-Za-z0-9_]` in `text`.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// `text` with what varies run to run replaced: runs of 8 or more hex digits (letters and
/// digits both) by `<hexN>`, digit runs by `<n>`; cut to 80 characters.
pub fn shape(text: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let hex_run = chars[i..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit())
            .count();
        let starts_word = i == 0 || !chars[i - 1].is_ascii_alphanumeric();
        let ends_word = chars
            .get(i + hex_run)
            .is_none_or(|c| !c.is_ascii_alphanumeric());
        let run = &chars[i..i + hex_run];
        let mixed = run.iter().any(char::is_ascii_digit) && !run.iter().all(char::is_ascii_digit);
        if hex_run >= 8 && mixed && (starts_word || chars[i - 1] == '_') && ends_word {
            out.push_str(&format!("<hex{hex_run}>"));
            i += hex_run;
        } else if c.is_ascii_digit() {
            let digits = chars[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            out.push_str("<n>");
            i += digits;
        } else {
            out.push(c);
            i += 1;
        }
    }
    if out.chars().count() > TITLE_CHARS {
        out = out.chars().take(TITLE_CHARS).collect::<String>() + "…";
    }
    out
}

/// `dsh-sim findings DIR`: prints the findings; unreadable journals are reported on stderr
/// and skipped; an error when `root` is not a folder.
pub fn run_findings(root: &Path) -> anyhow::Result<()> {
    if !root.is_dir() {
        anyhow::bail!("{} is not a folder", root.display());
    }
    let (scenarios, problems) = collect(root);
    for problem in &problems {
        eprintln!("dsh-sim findings: skipped {problem}");
    }
    for line in findings(&scenarios) {
        println!("{line}");
    }
    let model = scenarios.iter().filter(|s| !s.model_api.is_empty()).count();
    let acp = scenarios.iter().filter(|s| !s.acp.is_empty()).count();
    println!(
        "findings: {} scenario folders, {model} with a model API journal, {acp} with a \
         client-side journal",
        scenarios.len()
    );
    Ok(())
}
