//! The DSH-side record of a chat: every `stream` request (summarised), every chunk, how
//! each agent-loop run ended, and how often each tool ran. The runner judges
//! expectations from it and leaves it as an artefact when a scenario fails.

use std::collections::BTreeMap;

use antigravity_acp::contract::{
    ContentBlock, ContentBlockType, FinishReason, GenerateOptions, LlmFailure, Message, Role,
    StreamChunk,
};
use serde::Serialize;

use crate::scenario::FinishKind;

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

/// One `stream` call: what was asked and everything that came back.
#[derive(Debug, Serialize)]
pub struct GenerationRecord {
    /// The request, summarised.
    pub request: RequestSummary,
    /// Every chunk of the stream, in order.
    pub parts: Vec<StreamChunk>,
    /// How long after the `stream` call its terminal chunk arrived (none: it never did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_after: Option<std::time::Duration>,
}

/// How an agent-loop run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RunOutcome {
    /// Still running (or cut off by the scenario's time bound).
    Unfinished,
    /// A terminal `stop` or `max-tokens` finish (`tool-calls` ends a run only when DSH
    /// aborts it).
    Finished {
        /// Its kind.
        reason: FinishKind,
    },
    /// An `aborted` finish.
    Aborted {
        /// Why (code `ABORTED`).
        failure: LlmFailure,
    },
    /// DSH aborted the run when a generation finished with tool calls, instead of
    /// running them (the user pressed stop).
    AbortedWithToolsPending,
    /// DSH dropped the stream at the first block delta (an early return).
    DroppedByDsh,
    /// The adapter ended a generation with an `error` finish.
    Failed {
        /// Why.
        failure: LlmFailure,
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
            Self::Finished { reason } => write!(f, "finish({})", reason.name()),
            Self::Aborted { failure } => write!(f, "finish(aborted {})", failure.code),
            Self::AbortedWithToolsPending => {
                f.write_str("finish(tool-calls), then aborted by DSH with the tools pending")
            }
            Self::DroppedByDsh => f.write_str("stream dropped by DSH at the first delta"),
            Self::Failed { failure } => {
                write!(f, "finish(error {}: {})", failure.code, failure.message)
            }
            Self::Violation { message } => write!(f, "stream protocol violation: {message}"),
            Self::HostFailure { message } => write!(f, "host failure: {message}"),
        }
    }
}

/// A `stream` request as the transcript shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RequestSummary {
    /// The model, as `provider/model`.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// One line per history message.
    pub history: Vec<String>,
    /// The offered tools' names.
    pub tools: Vec<String>,
    /// The purpose (`chat` when DSH sets none).
    pub purpose: String,
}

impl RequestSummary {
    /// Summarises `request`.
    pub fn of(request: &GenerateOptions) -> Self {
        let purpose = request
            .purpose
            .and_then(|p| serde_json::to_value(p).ok())
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "chat".to_owned());
        Self {
            model: format!("{}/{}", request.provider, request.model),
            system: request.system().to_owned(),
            history: request.messages.iter().map(message_line).collect(),
            tools: request.tools().iter().map(|t| t.name.clone()).collect(),
            purpose,
        }
    }
}

fn message_line(message: &Message) -> String {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let blocks: Vec<String> = message.content.iter().map(block_line).collect();
    format!("{role}: {}", blocks.join("; "))
}

fn block_line(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => format!("{:?}", t.text),
        ContentBlock::Reasoning(r) => format!("reasoning {:?}", r.text),
        ContentBlock::Image(i) => format!("<image {}>", i.attachment.media_type),
        ContentBlock::ToolCall(call) => {
            format!("tool_call {} {} {}", call.id, call.name, call.arguments)
        }
        ContentBlock::ToolResult(result) => {
            let flag = if result.is_error == Some(true) {
                " (error)"
            } else {
                ""
            };
            let content: Vec<String> = result.content.iter().map(block_line).collect();
            format!(
                "tool_result {}{flag} {}",
                result.tool_call_id,
                content.join(" ")
            )
        }
        ContentBlock::Other(value) => format!("<{value}>"),
    }
}

/// A finish chunk as `expect.streams` spells it: `finish: stop`, `finish: tool-calls`,
/// `finish: aborted ABORTED`, `finish: error ACP_TIMEOUT`.
pub fn finish_line(reason: &FinishReason) -> String {
    let kind = FinishKind::of(reason).name();
    match reason.failure() {
        Some(failure) => format!("finish: {kind} {}", failure.code),
        None => format!("finish: {kind}"),
    }
}

/// A generation's stream as one line per block, in the order blocks opened: the form
/// `expect.streams` compares with (`reasoning#0: …`, `text#1: …`,
/// `tool_call#2: name {args}`, `usage: in/out`, `finish: stop`, `finish: error CODE`).
/// A tool call's line is written from its `block-end` (the assembled `ToolCallBlock`).
pub fn summarize(parts: &[StreamChunk]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut open: BTreeMap<u32, usize> = BTreeMap::new();
    for part in parts {
        match part {
            StreamChunk::BlockStart { index, block_type } => {
                let kind = match block_type {
                    ContentBlockType::Text => "text",
                    ContentBlockType::Reasoning => "reasoning",
                    // A tool call's line comes from its block-end.
                    _ => continue,
                };
                open.insert(*index, lines.len());
                lines.push(format!("{kind}#{index}: "));
            }
            StreamChunk::TextDelta { index, text }
            | StreamChunk::ReasoningDelta { index, text } => {
                if let Some(line) = open.get(index).and_then(|at| lines.get_mut(*at)) {
                    line.push_str(text);
                }
            }
            StreamChunk::ToolCallDelta { .. } => {}
            StreamChunk::BlockEnd {
                index,
                block: ContentBlock::ToolCall(call),
            } => {
                let arguments = serde_json::from_str(&call.arguments)
                    .map(|v| canonical_json(&v))
                    .unwrap_or_else(|_| call.arguments.clone());
                lines.push(format!("tool_call#{index}: {} {arguments}", call.name));
            }
            StreamChunk::BlockEnd { .. } => {}
            StreamChunk::Usage { usage } => {
                lines.push(format!(
                    "usage: {}/{}",
                    usage.input_tokens, usage.output_tokens
                ));
            }
            StreamChunk::Finish { reason, .. } => lines.push(finish_line(reason)),
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
pub fn visible_text(parts: &[StreamChunk]) -> String {
    let mut text_blocks = std::collections::BTreeSet::new();
    let mut text = String::new();
    for part in parts {
        match part {
            StreamChunk::BlockStart {
                index,
                block_type: ContentBlockType::Text,
            } => {
                text_blocks.insert(*index);
            }
            StreamChunk::TextDelta { index, text: delta } if text_blocks.contains(index) => {
                text.push_str(delta);
            }
            _ => {}
        }
    }
    text
}

impl Transcript {
    /// The failure the last run ended with (an `error` or `aborted` finish).
    pub fn last_failure(&self) -> Option<&LlmFailure> {
        match &self.runs.last()?.outcome {
            RunOutcome::Failed { failure } | RunOutcome::Aborted { failure } => Some(failure),
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
                    let line = serde_json::to_string(part).unwrap_or_default();
                    out.push_str(&format!("    chunk    {line}\n"));
                }
            }
            out.push_str(&format!("  outcome: {}\n", run.outcome));
        }
        out.push_str(&format!("executions: {:?}\n", self.executions));
        out
    }
}
