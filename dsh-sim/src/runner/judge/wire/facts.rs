//! What crossed the wire, extracted from the fake's journal once per scenario: per
//! server process, the client's methods, handshakes, the tools each session disabled,
//! prompts, model choices, permission answers, the MCP calls the server made and the
//! native steps it withheld.

use fake_antigravity::journal::JournalEntry;
use serde_json::Value;

use crate::scenario::McpResultKind;

/// The facts of one server process, in journal order.
#[derive(Debug, Clone, Default)]
pub struct ProcessFacts {
    /// The pid the process reported at start.
    pub pid: Option<u32>,
    /// The working directory it reported at start.
    pub cwd: Option<String>,
    /// The names of the environment variables it received.
    pub env_names: Vec<String>,
    /// Its arguments (without the program).
    pub args: Vec<String>,
    /// The values of the recorded variables (`ANTIGRAVITY_HARNESS_PATH`, ...) it received.
    pub recorded_env: std::collections::BTreeMap<String, String>,
    /// Every method the client sent (requests and notifications), in order.
    pub methods: Vec<String>,
    /// `params.clientCapabilities` of every `initialize`.
    pub client_capabilities: Vec<Value>,
    /// `params.mcpServers` of every `session/new`.
    pub session_new_mcp_servers: Vec<Value>,
    /// `params.cwd` of every `session/new`: the workspace the server's agent is scoped to.
    pub session_new_cwds: Vec<String>,
    /// Every `session/new`, `session/load` and `session/resume`, as (method,
    /// `params._meta.agy.disabledTools`, `Null` when absent).
    pub session_disabled_tools: Vec<(String, Value)>,
    /// The tool of every `native` step the fake withheld because its session disabled
    /// the tool, in order.
    pub native_steps_withheld: Vec<String>,
    /// The `sessionUpdate` kind of every `session/update` the server sent.
    pub update_kinds: Vec<String>,
    /// The text of every `session/prompt` (its text and resource blocks joined).
    pub prompts: Vec<String>,
    /// The `value` of every `session/set_config_option` with `configId: model`.
    pub models_selected: Vec<String>,
    /// The `methodId` of every `authenticate`.
    pub authenticate: Vec<String>,
    /// The client's answers to `session/request_permission`: an `optionId` or
    /// `cancelled` (or `error` for an error response).
    pub permission_answers: Vec<String>,
    /// The same answers by the kind of the option chosen (`allow_once`, `reject_once`,
    /// …, or `cancelled` / `error`): what a real agent's differently named options are
    /// judged by.
    pub permission_answer_kinds: Vec<String>,
    /// How many MCP `tools/call` requests the server made.
    pub mcp_tool_calls: usize,
    /// How every MCP `tools/call` ended.
    pub mcp_tool_results: Vec<McpResultKind>,
    /// Every answered MCP `tools/call` as (tool name, the text of its result's content),
    /// paired by the journal with the call it answers.
    pub mcp_call_results: Vec<(String, String)>,
    /// Every MCP exchange the server had with a host MCP server, in order, as
    /// `<method> ok` or `<method> failed` (`GET` for a server stream).
    pub mcp_exchanges: Vec<String>,
    /// The tool names of each successful `tools/list` answer, in order.
    pub mcp_tools_listed: Vec<Vec<String>>,
    /// Script expectations that failed, prompts no turn matched, and an `initialize`
    /// that asked for an ACP version other than 1, as sentences.
    pub script_failures: Vec<String>,
    /// Whether the process journaled its exit.
    pub exited: bool,
    /// Why it exited, as it journaled (`stdin closed`: the client closed the ACP
    /// connection; `signal`; `error: …`), `None` when it journaled no exit (killed).
    pub exit_reason: Option<String>,
    /// The pids of child processes it spawned (and journaled).
    pub child_pids: Vec<u32>,
    /// Every real action of its native tools, as `<action> <outcome>` (`read denied`,
    /// `write done`, `signal denied`).
    pub native_actions: Vec<String>,
    /// Every ACP frame it read or wrote, as JSON text.
    pub frames: Vec<String>,
    /// Every slash command the fake found in a prompt and ran (`prompt.slash_commands`),
    /// as `/<name>`, in order.
    pub slash_commands: Vec<String>,
    /// Every write of `settings.json`, as `<auth.type or none> by <writer>`, in order.
    pub settings_written: Vec<String>,
}

/// Extracts the facts of each process (journal files in start order).
pub fn extract(journal: &[Vec<JournalEntry>]) -> Vec<ProcessFacts> {
    journal
        .iter()
        .map(|entries| process_facts(entries))
        .collect()
}

fn process_facts(entries: &[JournalEntry]) -> ProcessFacts {
    let mut facts = ProcessFacts::default();
    let mut permission_requests: Vec<(Value, Value)> = Vec::new();
    for entry in entries {
        match entry {
            JournalEntry::Started {
                pid,
                cwd,
                env_names,
                args,
                env,
            } => {
                facts.pid = Some(*pid);
                facts.cwd = Some(cwd.clone());
                facts.env_names.clone_from(env_names);
                facts.args.clone_from(args);
                facts.recorded_env.clone_from(env);
            }
            JournalEntry::AcpIn { frame } => {
                facts.frames.push(frame.to_string());
                client_frame(frame, &permission_requests, &mut facts);
            }
            JournalEntry::AcpOut { frame } => {
                facts.frames.push(frame.to_string());
                match method_of(frame) {
                    Some("session/request_permission") => {
                        if let Some(id) = frame.get("id") {
                            let options = frame
                                .pointer("/params/options")
                                .cloned()
                                .unwrap_or(Value::Null);
                            permission_requests.push((id.clone(), options));
                        }
                    }
                    Some("session/update") => facts.update_kinds.push(
                        frame
                            .pointer("/params/update/sessionUpdate")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                    ),
                    _ => {}
                }
            }
            JournalEntry::McpRequest { method, .. } if method == "tools/call" => {
                facts.mcp_tool_calls += 1;
            }
            JournalEntry::McpRequest { .. } => {}
            JournalEntry::McpResponse {
                method,
                result,
                params,
                ..
            } => {
                if let (true, Some(result)) = (method == "tools/call", result) {
                    facts
                        .mcp_call_results
                        .push((called_tool(params.as_ref()), result_text(result)));
                }
                if let (true, Some(result)) = (method == "tools/list", result) {
                    facts.mcp_tools_listed.push(listed_tool_names(result));
                }
                let outcome = if result.is_some() { "ok" } else { "failed" };
                facts.mcp_exchanges.push(format!("{method} {outcome}"));
                if method == "tools/call" {
                    facts.mcp_tool_results.push(match result {
                        Some(result) if result.get("isError") == Some(&Value::Bool(true)) => {
                            McpResultKind::Error
                        }
                        Some(_) => McpResultKind::Ok,
                        None => McpResultKind::Failed,
                    });
                }
            }
            JournalEntry::ExpectationFailed {
                turn,
                step,
                message,
            } => facts.script_failures.push(format!(
                "fake script expectation failed (turn {turn}, step {step}): {message}"
            )),
            JournalEntry::UnmatchedPrompt { prompt } => facts.script_failures.push(format!(
                "no scripted fake turn matches the prompt (which ends with {:?})",
                tail(prompt, 120)
            )),
            JournalEntry::Exited { reason } => {
                facts.exited = true;
                facts.exit_reason = Some(reason.clone());
            }
            JournalEntry::ChildSpawned { pid } => facts.child_pids.push(*pid),
            JournalEntry::NativeStepWithheld { tool, .. } => {
                facts.native_steps_withheld.push(tool.clone());
            }
            JournalEntry::NativeAction {
                action, outcome, ..
            } => facts.native_actions.push(format!("{action} {outcome}")),
            JournalEntry::SlashCommand { command, .. } => {
                facts.slash_commands.push(format!("/{command}"));
            }
            // Whether each scripted fault acted is no wire fact: it is judged apart.
            JournalEntry::ServerFaultApplied { .. } | JournalEntry::McpFaultApplied { .. } => {}
            // The credentials are judged on disk after the run (`runner/judge/conversations.rs`).
            JournalEntry::SettingsWritten { auth_type, by } => {
                let written = auth_type.as_deref().unwrap_or("none");
                facts.settings_written.push(format!("{written} by {by}"));
            }
            // Judged by `runner/judge/conversations.rs` (B08), whatever the scenario expects.
            JournalEntry::ConversationFileVanished { .. } => {}
        }
    }
    facts
}

/// A frame the client sent: a request/notification, or an answer to the agent.
fn client_frame(frame: &Value, permission_requests: &[(Value, Value)], facts: &mut ProcessFacts) {
    let params = frame.get("params").unwrap_or(&Value::Null);
    let Some(method) = method_of(frame) else {
        if let Some(id) = frame.get("id")
            && let Some((_, options)) = permission_requests.iter().find(|(asked, _)| asked == id)
        {
            let answer = permission_answer(frame);
            let kind = options
                .as_array()
                .and_then(|all| {
                    all.iter()
                        .find(|o| str_at(o, "optionId") == Some(answer.as_str()))
                })
                .and_then(|o| str_at(o, "kind"))
                .map_or_else(|| answer.clone(), str::to_owned);
            facts.permission_answers.push(answer);
            facts.permission_answer_kinds.push(kind);
        }
        return;
    };
    facts.methods.push(method.to_owned());
    if matches!(method, "session/new" | "session/load" | "session/resume") {
        let disabled = params.pointer("/_meta/agy/disabledTools");
        facts
            .session_disabled_tools
            .push((method.to_owned(), disabled.cloned().unwrap_or(Value::Null)));
    }
    match method {
        "initialize" => {
            facts.client_capabilities.push(
                params
                    .get("clientCapabilities")
                    .cloned()
                    .unwrap_or(Value::Null),
            );
            // C05, checked in every scenario: an ACP v1 client asks for version 1.
            let asked = params.get("protocolVersion").unwrap_or(&Value::Null);
            if *asked != 1 {
                facts.script_failures.push(format!(
                    "the client's initialize asked for ACP protocolVersion {asked}; an ACP v1 client sends 1"
                ));
            }
        }
        "session/new" => {
            facts
                .session_new_mcp_servers
                .push(params.get("mcpServers").cloned().unwrap_or(Value::Null));
            facts
                .session_new_cwds
                .push(str_at(params, "cwd").unwrap_or_default().to_owned());
        }
        "session/prompt" => facts.prompts.push(prompt_text(params)),
        "session/set_config_option" if str_at(params, "configId") == Some("model") => {
            facts
                .models_selected
                .push(params.get("value").map(value_text).unwrap_or_default());
        }
        "authenticate" => facts
            .authenticate
            .push(str_at(params, "methodId").unwrap_or_default().to_owned()),
        _ => {}
    }
}

fn permission_answer(frame: &Value) -> String {
    let outcome = frame.get("result").and_then(|r| r.get("outcome"));
    match outcome.and_then(|o| str_at(o, "outcome")) {
        Some("selected") => outcome
            .and_then(|o| str_at(o, "optionId"))
            .unwrap_or("selected")
            .to_owned(),
        Some(other) => other.to_owned(),
        None => "error".to_owned(),
    }
}

/// The method of a request or notification.
pub fn method_of(frame: &Value) -> Option<&str> {
    frame.get("method").and_then(Value::as_str)
}

fn str_at<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn value_text(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

fn prompt_text(params: &Value) -> String {
    let blocks = params.get("prompt").and_then(Value::as_array);
    blocks
        .into_iter()
        .flatten()
        .filter_map(|block| {
            str_at(block, "text").or_else(|| block.get("resource").and_then(|r| str_at(r, "text")))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn tail(text: &str, chars: usize) -> String {
    let count = text.chars().count();
    text.chars().skip(count.saturating_sub(chars)).collect()
}

/// Every MCP endpoint URL given to the server in any `session/new`.
pub fn bridge_urls(processes: &[ProcessFacts]) -> Vec<String> {
    processes
        .iter()
        .flat_map(|p| p.session_new_mcp_servers.iter())
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|server| str_at(server, "url").map(str::to_owned))
        .collect()
}

/// The tool a `tools/call` named (empty when the journal does not say).
fn called_tool(params: Option<&Value>) -> String {
    params
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The text blocks of an MCP tool result, joined.
fn result_text(result: &Value) -> String {
    result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The `name` of every tool in a `tools/list` result, in its order.
fn listed_tool_names(result: &Value) -> Vec<String> {
    result
        .get("tools")
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| tool.get("name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}
