//! DSH's agent loop in miniature. For each user message: generate with the complete
//! history and the current tools, consume and validate the stream, and on
//! finish(tool_calls) apply DSH's permission policy to each call, record the assistant
//! message and the tool results, and generate again, until another terminal finish or
//! an error. A run may also be aborted the way a user presses stop: mid-stream, or while
//! DSH holds the tool calls.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use antigravity_acp::contract::{
    AssistantPart, BlockKind, FinishReason, GenerateRequest, LlmAdapter, LlmError, Message,
    PartStream, Purpose, SamplingOptions, StreamPart, ToolCallPart, ToolResult, UserPart,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::host::stream_check::{Progress, StreamValidator, describe};
use crate::host::tools::{Handled, HostTool, ToolBehaviour, handle_call};
use crate::host::transcript::{
    GenerationRecord, RequestSummary, RunOutcome, RunRecord, Transcript,
};
use crate::scenario::AbortPoint;

/// The loop's own bounds.
#[derive(Debug, Clone, Copy)]
pub struct LoopLimits {
    /// Generations one user message may take before DSH gives up.
    pub max_generations_per_run: usize,
    /// How long the adapter has to end a stream after its terminal item.
    pub stream_close_bound: Duration,
}

impl Default for LoopLimits {
    fn default() -> Self {
        Self {
            max_generations_per_run: 16,
            stream_close_bound: Duration::from_secs(10),
        }
    }
}

/// A chat's settings: the model by DSH's precedence, the system prompt and the tools.
#[derive(Debug, Clone)]
pub struct ChatSetup {
    /// The full DSH model id.
    pub model: String,
    /// DSH's system prompt.
    pub system: String,
    /// The tools DSH offers.
    pub tools: Vec<HostTool>,
}

/// One chat driven through one adapter.
pub struct AgentLoop {
    adapter: Arc<dyn LlmAdapter>,
    setup: ChatSetup,
    limits: LoopLimits,
    history: Vec<Message>,
    seen_call_ids: BTreeSet<String>,
    chat_abort: CancellationToken,
    run_abort: CancellationToken,
    /// How deep this chat is nested in subagents (0: the user's chat).
    depth: usize,
}

/// How deep DSH nests subagents: a chat at this depth is offered no subagent tools.
pub const MAX_SUBAGENT_DEPTH: usize = 2;

impl AgentLoop {
    /// Runs a subagent: a nested chat through the same adapter, with the chat's tools
    /// (subagents included until [`MAX_SUBAGENT_DEPTH`]), while this chat's tool call
    /// stays parked. Returns its final answer (or why it failed) and whether it failed.
    /// Its tool executions count for the chat.
    async fn run_subagent(&self, task: &str, transcript: &mut Transcript) -> (String, bool) {
        let depth = self.depth + 1;
        let setup = ChatSetup {
            model: self.setup.model.clone(),
            system: self.setup.system.clone(),
            tools: self
                .setup
                .tools
                .iter()
                .filter(|t| {
                    depth < MAX_SUBAGENT_DEPTH || !matches!(t.behaviour, ToolBehaviour::Subagent(_))
                })
                .cloned()
                .collect(),
        };
        let mut nested = AgentLoop::new(self.adapter.clone(), setup, self.limits);
        nested.depth = depth;
        let mut nested_transcript = Transcript::default();
        let outcome = Box::pin(nested.run_user_message(task, &mut nested_transcript)).await;
        for (tool, count) in nested_transcript.executions {
            *transcript.executions.entry(tool).or_insert(0) += count;
        }
        match outcome {
            RunOutcome::Finished {
                reason: FinishReason::Stop,
            } => (final_answer(nested.history()), false),
            other => (format!("the subagent did not finish: {other:?}"), true),
        }
    }
}

/// The text of the last assistant message.
fn final_answer(history: &[Message]) -> String {
    history
        .iter()
        .rev()
        .find_map(|message| match message {
            Message::Assistant(parts) => Some(
                parts
                    .iter()
                    .filter_map(|part| match part {
                        AssistantPart::Text(text) => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<String>(),
            ),
            _ => None,
        })
        .unwrap_or_default()
}

/// The output DSH records for a tool call it never ran because the run was aborted.
pub const ABORTED_BY_USER: &str = "aborted by the user";

/// How one generation ended, as the loop acts on it.
enum GenerationEnd {
    Finished(FinishReason),
    /// DSH dropped the stream before its terminal item.
    Dropped,
    Failed(LlmError),
    Violation(String),
}

impl AgentLoop {
    /// A fresh chat.
    pub fn new(adapter: Arc<dyn LlmAdapter>, setup: ChatSetup, limits: LoopLimits) -> Self {
        Self {
            adapter,
            setup,
            limits,
            history: Vec::new(),
            seen_call_ids: BTreeSet::new(),
            chat_abort: CancellationToken::new(),
            run_abort: CancellationToken::new(),
            depth: 0,
        }
    }

    /// The chat's history so far.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// DSH's abort signal for the whole chat: cancelling it aborts every run (each run's
    /// own signal, given to every generate, is a child of it).
    pub fn abort_signal(&self) -> CancellationToken {
        self.chat_abort.clone()
    }

    /// Runs the loop for one user message, recording everything into `transcript` as it
    /// happens (so a run cut off by a time bound still leaves its record).
    pub async fn run_user_message(
        &mut self,
        text: &str,
        transcript: &mut Transcript,
    ) -> RunOutcome {
        self.run(text, None, transcript).await
    }

    /// Like [`Self::run_user_message`], but DSH aborts the run at `abort` (the user
    /// pressing stop).
    pub async fn run_user_message_aborting(
        &mut self,
        text: &str,
        abort: AbortPoint,
        transcript: &mut Transcript,
    ) -> RunOutcome {
        self.run(text, Some(abort), transcript).await
    }

    async fn run(
        &mut self,
        text: &str,
        abort: Option<AbortPoint>,
        transcript: &mut Transcript,
    ) -> RunOutcome {
        self.run_abort = self.chat_abort.child_token();
        self.history
            .push(Message::User(vec![UserPart::Text(text.to_owned())]));
        transcript.runs.push(RunRecord {
            user: text.to_owned(),
            generations: Vec::new(),
            outcome: RunOutcome::Unfinished,
        });
        let outcome = self.drive(abort, transcript).await;
        if let Some(run) = transcript.runs.last_mut() {
            run.outcome = outcome.clone();
        }
        outcome
    }

    async fn drive(
        &mut self,
        abort: Option<AbortPoint>,
        transcript: &mut Transcript,
    ) -> RunOutcome {
        for _ in 0..self.limits.max_generations_per_run {
            let request = self.request();
            let summary = RequestSummary::of(&request);
            let stream = self.adapter.generate(request);
            let Some(run) = transcript.runs.last_mut() else {
                return host_failure("the run record vanished");
            };
            run.generations.push(GenerationRecord {
                request: summary,
                parts: Vec::new(),
            });
            let Some(record) = run.generations.last_mut() else {
                return host_failure("the generation record vanished");
            };
            let end = self.consume(stream, abort, &mut record.parts).await;
            let parts = record.parts.clone();
            match end {
                GenerationEnd::Failed(error) => return RunOutcome::Failed { error },
                GenerationEnd::Dropped => return RunOutcome::DroppedByDsh,
                GenerationEnd::Violation(message) => return RunOutcome::Violation { message },
                GenerationEnd::Finished(FinishReason::ToolCalls)
                    if abort == Some(AbortPoint::OnToolCalls) =>
                {
                    self.run_abort.cancel();
                    self.record_aborted_tools(&parts);
                    return RunOutcome::AbortedWithToolsPending;
                }
                GenerationEnd::Finished(FinishReason::ToolCalls)
                    if abort == Some(AbortPoint::LeaveToolCalls) =>
                {
                    self.record_aborted_tools(&parts);
                    return RunOutcome::AbortedWithToolsPending;
                }
                GenerationEnd::Finished(FinishReason::ToolCalls) => {
                    if let Err(message) = self.run_tools(&parts, transcript).await {
                        return RunOutcome::Violation { message };
                    }
                }
                GenerationEnd::Finished(reason) => {
                    self.history
                        .push(Message::Assistant(assistant_parts(&parts)));
                    return RunOutcome::Finished { reason };
                }
            }
        }
        host_failure(&format!(
            "no final answer after {} generations",
            self.limits.max_generations_per_run
        ))
    }

    fn request(&self) -> GenerateRequest {
        GenerateRequest {
            model: self.setup.model.clone(),
            system: self.setup.system.clone(),
            history: self.history.clone(),
            tools: self
                .setup
                .tools
                .iter()
                .map(|t| t.definition.clone())
                .collect(),
            purpose: Purpose::Chat,
            sampling: SamplingOptions::default(),
            abort: self.run_abort.clone(),
        }
    }

    /// Reads the stream to its end, recording and validating every item.
    async fn consume(
        &self,
        mut stream: PartStream,
        abort: Option<AbortPoint>,
        parts: &mut Vec<Result<StreamPart, LlmError>>,
    ) -> GenerationEnd {
        let mut validator = StreamValidator::new();
        let terminal = loop {
            let Some(item) = stream.recv().await else {
                return match validator.end_of_stream() {
                    Ok(()) => GenerationEnd::Violation("the stream ended twice".to_owned()),
                    Err(message) => GenerationEnd::Violation(message),
                };
            };
            let delta = matches!(item, Ok(StreamPart::BlockDelta { .. }));
            if delta && abort == Some(AbortPoint::OnFirstDelta) {
                self.run_abort.cancel();
            }
            if delta && abort == Some(AbortPoint::DropOnFirstDelta) {
                parts.push(item);
                drop(stream);
                return GenerationEnd::Dropped;
            }
            parts.push(item.clone());
            match validator.observe(&item) {
                Err(message) => return GenerationEnd::Violation(message),
                Ok(Progress::Continue) => {}
                Ok(Progress::Terminal) => break item,
            }
        };
        // Nothing may follow the terminal item, and the stream must end.
        match tokio::time::timeout(self.limits.stream_close_bound, stream.recv()).await {
            Ok(None) => {}
            Ok(Some(extra)) => {
                let message = format!("{} after the terminal item", describe(&extra));
                parts.push(extra);
                return GenerationEnd::Violation(message);
            }
            Err(_) => {
                return GenerationEnd::Violation(format!(
                    "the stream stayed open {:?} after its terminal item",
                    self.limits.stream_close_bound
                ));
            }
        }
        match terminal {
            Ok(StreamPart::Finish { reason }) => GenerationEnd::Finished(reason),
            Err(error) => GenerationEnd::Failed(error),
            Ok(other) => {
                GenerationEnd::Violation(format!("non-terminal {other:?} ended the stream"))
            }
        }
    }

    /// DSH's record of a tool round the user aborted: the assistant's calls, each
    /// answered with an error result, none executed (the history stays consistent).
    fn record_aborted_tools(&mut self, parts: &[Result<StreamPart, LlmError>]) {
        let assistant = assistant_parts(parts);
        let results = assistant
            .iter()
            .filter_map(|p| match p {
                AssistantPart::ToolCall(call) => Some(ToolResult {
                    call_id: call.call_id.clone(),
                    tool_name: call.tool_name.clone(),
                    output: serde_json::Value::String(ABORTED_BY_USER.to_owned()),
                    is_error: true,
                }),
                _ => None,
            })
            .collect();
        self.history.push(Message::Assistant(assistant));
        self.history.push(Message::Tool(results));
    }

    /// DSH's side of finish(tool_calls): permissions, execution, durable results.
    async fn run_tools(
        &mut self,
        parts: &[Result<StreamPart, LlmError>],
        transcript: &mut Transcript,
    ) -> Result<(), String> {
        let assistant = assistant_parts(parts);
        let mut results = Vec::new();
        for call in assistant.iter().filter_map(|p| match p {
            AssistantPart::ToolCall(call) => Some(call),
            _ => None,
        }) {
            if !self.seen_call_ids.insert(call.call_id.clone()) {
                return Err(format!("call id `{}` was used before", call.call_id));
            }
            let tool = self
                .setup
                .tools
                .iter()
                .find(|t| t.definition.name == call.tool_name)
                .ok_or_else(|| {
                    format!(
                        "tool_call for `{}`, which DSH did not offer",
                        call.tool_name
                    )
                })?;
            if tool.permission == crate::scenario::Permission::Allow && !tool.duration.is_zero() {
                // A slow tool: the scripted world's own time, not a wait for an event.
                tokio::time::sleep(tool.duration).await;
            }
            let side_run = match (&tool.permission, &tool.behaviour) {
                (crate::scenario::Permission::Allow, ToolBehaviour::Subagent(task)) => {
                    Some(self.run_subagent(task, transcript).await)
                }
                (crate::scenario::Permission::Allow, ToolBehaviour::TitleRequest(text)) => Some(
                    crate::host::side_requests::title(
                        self.adapter.as_ref(),
                        &self.setup.model,
                        text,
                        self.run_abort.child_token(),
                    )
                    .await,
                ),
                _ => None,
            };
            let handled = match side_run {
                Some((output, is_error)) => Handled {
                    result: ToolResult {
                        call_id: call.call_id.clone(),
                        tool_name: call.tool_name.clone(),
                        output: Value::String(output),
                        is_error,
                    },
                    executed: true,
                },
                None => handle_call(tool, call),
            };
            if handled.executed {
                *transcript
                    .executions
                    .entry(call.tool_name.clone())
                    .or_insert(0) += 1;
            }
            results.push(handled.result);
        }
        self.history.push(Message::Assistant(assistant));
        self.history.push(Message::Tool(results));
        Ok(())
    }
}

fn host_failure(message: &str) -> RunOutcome {
    RunOutcome::HostFailure {
        message: message.to_owned(),
    }
}

/// The assistant message DSH stores for a generation: its text and reasoning blocks and
/// tool calls, in the order they opened.
pub fn assistant_parts(parts: &[Result<StreamPart, LlmError>]) -> Vec<AssistantPart> {
    let mut out: Vec<AssistantPart> = Vec::new();
    let mut blocks: Vec<(u32, usize)> = Vec::new();
    for part in parts {
        match part {
            Ok(StreamPart::BlockStart { index, kind }) => {
                blocks.push((*index, out.len()));
                out.push(match kind {
                    BlockKind::Text => AssistantPart::Text(String::new()),
                    BlockKind::Reasoning => AssistantPart::Reasoning(String::new()),
                });
            }
            Ok(StreamPart::BlockDelta { index, delta }) => {
                let slot = blocks.iter().find(|(i, _)| i == index).map(|(_, at)| *at);
                if let Some(AssistantPart::Text(text) | AssistantPart::Reasoning(text)) =
                    slot.and_then(|at| out.get_mut(at))
                {
                    text.push_str(delta);
                }
            }
            Ok(StreamPart::ToolCall {
                call_id,
                tool_name,
                arguments,
                ..
            }) => out.push(AssistantPart::ToolCall(ToolCallPart {
                call_id: call_id.clone(),
                tool_name: tool_name.clone(),
                arguments: arguments.clone(),
            })),
            _ => {}
        }
    }
    out
}
