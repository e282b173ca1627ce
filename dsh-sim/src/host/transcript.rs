//! The DSH-side record of a chat: every generate request (summarised), every stream
//! part, how each agent-loop run ended, and how often each tool ran. The runner judges
//! expectations from it and leaves it as an artefact when a scenario fails.

use std::collections::BTreeMap;

use antigravity_acp::contract::{
    AssistantPart, BlockKind, FinishReason, GenerateRequest, LlmError, Message, StreamPart,
    UserPart,
};
use serde::Serialize;

/// Everything DSH saw during one scenario.
#[derive(Debug, Default, Serialize)]
pub struct Transcript {
    /// One record per user message, in order.
    pub runs: Vec<RunRecord>,
    /// How often DSH executed each tool (denied calls are not executions).
    pub executions: BTreeMap<String, u32>,
}

/// One agent-loop run: a user message and the generations it took.
#[derive(Debug, Serialize)]
pub struct RunRecord {
    /// The user's message.
    pub user: String,
    /// Every generation of the run, in order.
    pub generations: Vec<GenerationRecord>,
    /// How the run ended.
    pub outcome: RunOutcome,
}

/// One `generate` call: what was asked and everything that came back.
#[derive(Debug, Serialize)]
pub struct GenerationRecord {
    /// The request, summarised.
    pub request: RequestSummary,
    /// Every item of the stream, in order (errors included).
    pub parts: Vec<Result<StreamPart, LlmError>>,
}

/// How an agent-loop run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RunOutcome {
    /// Still running (or cut off by the scenario's time bound).
    Unfinished,
    /// A terminal finish other than `tool_calls`.
    Finished {
        /// Its reason.
        reason: FinishReason,
    },
    /// DSH aborted the run when a generation finished with tool calls, instead of
    /// running them (the user pressed stop).
    AbortedWithToolsPending,
    /// DSH dropped the stream at the first block delta (an early return).
    DroppedByDsh,
    /// The adapter ended a generation with an error.
    Failed {
        /// The error.
        error: LlmError,
    },
    /// The adapter broke the stream protocol (or the tool-call rules) as DSH judges it.
    Violation {
        /// What was broken.
        message: String,
    },
    /// DSH itself could not go on (no model, too many generations, ...).
    HostFailure {
        /// Why.
        message: String,
    },
}

impl std::fmt::Display for RunOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unfinished => f.write_str("unfinished"),
            Self::Finished { reason } => write!(f, "finish({})", finish_name(*reason)),
            Self::AbortedWithToolsPending => {
                f.write_str("finish(tool_calls), then aborted by DSH with the tools pending")
            }
            Self::DroppedByDsh => f.write_str("stream dropped by DSH at the first delta"),
            Self::Failed { error } => write!(f, "error {error}"),
            Self::Violation { message } => write!(f, "stream protocol violation: {message}"),
            Self::HostFailure { message } => write!(f, "host failure: {message}"),
        }
    }
}

/// A generate request as the transcript shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RequestSummary {
    /// The model id.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// One line per history message.
    pub history: Vec<String>,
    /// The offered tools' names.
    pub tools: Vec<String>,
    /// The purpose.
    pub purpose: String,
}

impl RequestSummary {
    /// Summarises `request`.
    pub fn of(request: &GenerateRequest) -> Self {
        Self {
            model: request.model.clone(),
            system: request.system.clone(),
            history: request.history.iter().map(message_line).collect(),
            tools: request.tools.iter().map(|t| t.name.clone()).collect(),
            purpose: format!("{:?}", request.purpose).to_lowercase(),
        }
    }
}

fn message_line(message: &Message) -> String {
    match message {
        Message::User(parts) => {
            let parts: Vec<String> = parts
                .iter()
                .map(|p| match p {
                    UserPart::Text(text) => format!("{text:?}"),
                    UserPart::Binary(b) => format!("<{} binary>", b.media_type),
                })
                .collect();
            format!("user: {}", parts.join(" "))
        }
        Message::Assistant(parts) => {
            let parts: Vec<String> = parts
                .iter()
                .map(|p| match p {
                    AssistantPart::Text(text) => format!("text {text:?}"),
                    AssistantPart::Reasoning(text) => format!("reasoning {text:?}"),
                    AssistantPart::ToolCall(call) => format!(
                        "tool_call {} {} {}",
                        call.call_id, call.tool_name, call.arguments
                    ),
                })
                .collect();
            format!("assistant: {}", parts.join("; "))
        }
        Message::Tool(results) => {
            let results: Vec<String> = results
                .iter()
                .map(|r| {
                    let flag = if r.is_error { " is_error" } else { "" };
                    format!("{} {}{flag} {}", r.call_id, r.tool_name, r.output)
                })
                .collect();
            format!("tool: {}", results.join("; "))
        }
    }
}

/// The stable spelling of a finish reason (`stop`, `tool_calls`, ...).
pub fn finish_name(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::Length => "length",
        FinishReason::Refusal => "refusal",
        FinishReason::Cancelled => "cancelled",
    }
}

/// A generation's stream as one line per block, in the order blocks opened: the form
/// `expect.streams` compares with (`reasoning#0: …`, `text#1: …`,
/// `tool_call#2: name {args}`, `occupancy: used/size`, `finish: stop`, `error: code`).
pub fn summarize(parts: &[Result<StreamPart, LlmError>]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut open: BTreeMap<u32, usize> = BTreeMap::new();
    for part in parts {
        match part {
            Ok(StreamPart::BlockStart { index, kind }) => {
                let kind = match kind {
                    BlockKind::Text => "text",
                    BlockKind::Reasoning => "reasoning",
                };
                open.insert(*index, lines.len());
                lines.push(format!("{kind}#{index}: "));
            }
            Ok(StreamPart::BlockDelta { index, delta }) => {
                if let Some(line) = open.get(index).and_then(|at| lines.get_mut(*at)) {
                    line.push_str(delta);
                }
            }
            Ok(StreamPart::BlockEnd { .. }) => {}
            Ok(StreamPart::ToolCall {
                index,
                tool_name,
                arguments,
                ..
            }) => lines.push(format!(
                "tool_call#{index}: {tool_name} {}",
                canonical_json(arguments)
            )),
            Ok(StreamPart::ContextOccupancy { used, size }) => {
                lines.push(format!("occupancy: {used}/{size}"));
            }
            Ok(StreamPart::Finish { reason }) => {
                lines.push(format!("finish: {}", finish_name(*reason)));
            }
            Err(error) => lines.push(format!("error: {}", error.code)),
        }
    }
    lines
}

/// JSON with object keys sorted at every level, so summaries do not depend on the order
/// in which a peer wrote the keys.
pub fn canonical_json(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|key| {
                    let value = map.get(key).map(canonical_json).unwrap_or_default();
                    format!("{}:{value}", Value::String(key.clone()))
                })
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// The visible text of a generation: its text blocks' deltas joined.
pub fn visible_text(parts: &[Result<StreamPart, LlmError>]) -> String {
    let mut text_blocks = std::collections::BTreeSet::new();
    let mut text = String::new();
    for part in parts {
        match part {
            Ok(StreamPart::BlockStart {
                index,
                kind: BlockKind::Text,
            }) => {
                text_blocks.insert(*index);
            }
            Ok(StreamPart::BlockDelta { index, delta }) if text_blocks.contains(index) => {
                text.push_str(delta);
            }
            _ => {}
        }
    }
    text
}

impl Transcript {
    /// The error the last run ended with, if it failed.
    pub fn last_error(&self) -> Option<&LlmError> {
        match &self.runs.last()?.outcome {
            RunOutcome::Failed { error } => Some(error),
            _ => None,
        }
    }

    /// Every generation of every run, in order.
    pub fn generations(&self) -> impl Iterator<Item = &GenerationRecord> {
        self.runs.iter().flat_map(|run| run.generations.iter())
    }

    /// A readable rendering for artefacts: each request summary and every part.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (r, run) in self.runs.iter().enumerate() {
            out.push_str(&format!("run {}: user {:?}\n", r + 1, run.user));
            for (g, generation) in run.generations.iter().enumerate() {
                let request = &generation.request;
                out.push_str(&format!(
                    "  generation {}: model {} purpose {} tools {:?}\n    system {:?}\n",
                    g + 1,
                    request.model,
                    request.purpose,
                    request.tools,
                    request.system
                ));
                for line in &request.history {
                    out.push_str(&format!("    history  {line}\n"));
                }
                for part in &generation.parts {
                    let line = match part {
                        Ok(part) => serde_json::to_string(part).unwrap_or_default(),
                        Err(error) => format!("error {error}"),
                    };
                    out.push_str(&format!("    part     {line}\n"));
                }
            }
            out.push_str(&format!("  outcome: {}\n", run.outcome));
        }
        out.push_str(&format!("executions: {:?}\n", self.executions));
        out
    }
}
