//! DSH's agent loop in miniature. For each user message: `stream` with the complete
//! history and the current tools, consume and validate the chunks, and on
//! finish(tool-calls) apply DSH's permission policy to each call, record the assistant
//! message and one tool-result message per call, and stream again, until another finish. A run may also be aborted the way a user presses stop: mid-stream, or while
//! DSH holds the tool calls.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use antigravity_acp::contract::{
    ChunkStream, ContentBlock, FinishReason, GenerateOptions, LlmAdapter, LlmFailure, Message,
    StreamChunk, ToolCallBlock,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::host::assemble::{assemble, assistant_message, interrupted};
use crate::host::dsh_fault::{ChunkAction, FaultPlan, next_chunk};
use crate::host::registry::split_model;

use crate::host::stream_rules::{Progress, StreamValidator, describe};
use crate::host::tools::{Handled, HostTool, ToolBehaviour, handle_call, result_message};
use crate::host::transcript::{
    GenerationRecord, RequestSummary, RunOutcome, RunRecord, Transcript,
};
use crate::scenario::AbortPoint;
use crate::scenario::FinishKind;

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
    /// The model, as `provider/model`.
    pub model: String,
    /// DSH's system prompt.
    pub system: String,
    /// The tools DSH offers.
    pub tools: Vec<HostTool>,
    /// DSH's `maxTokens` on every request (`None`: none).
    pub max_tokens: Option<u64>,
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
    /// The next message id this chat gives out.
    next_message: u64,
    /// DSH's session identity for this chat (`GenerateOptions.sessionId`).
    session_id: String,
    /// The chat's DSH fault (`dsh.fault`), shared by the chats of one scenario.
    faults: Arc<FaultPlan>,
    /// Whether the next user message starts with an image.
    image_next: bool,
    /// The bytes of every image in the history, by attachment id, as DSH resolves them
    /// for each request.
    images: std::collections::HashMap<String, antigravity_acp::contract::ResolvedImage>,
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
            max_tokens: self.setup.max_tokens,
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
                reason: FinishKind::Stop,
            } => (final_answer(nested.history()), false),
            other => (format!("the subagent did not finish: {other}"), true),
        }
    }
}

/// The text of the last assistant message.
fn final_answer(history: &[Message]) -> String {
    history
        .iter()
        .rev()
        .find(|message| message.role == antigravity_acp::contract::Role::Assistant)
        .map(|message| {
            message
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text(text) => Some(text.text.as_str()),
                    _ => None,
                })
                .collect::<String>()
        })
        .unwrap_or_default()
}

/// The output DSH records (as an error result, so `Error: ` before it) for a tool call it
/// never ran because the run was aborted: DSH's loop's own text (dsh-agent-loop
/// `appendSkippedToolCall`, code `ABORTED_BEFORE_DISPATCH`).
pub const ABORTED_BY_USER: &str = "tool call aborted before dispatch";

/// The failure of a run the user stopped mid-stream: DSH's loop never takes the stream's
/// finish (it checks its turn signal before it takes each chunk), so the run ends aborted
/// with DSH's own cause, not the adapter's finish.
pub fn stopped_by_user() -> LlmFailure {
    LlmFailure {
        message: "the user stopped the run".to_owned(),
        code: "ABORTED".to_owned(),
        status: None,
        provider_retry_after_ms: None,
        request_id: None,
    }
}

/// How one generation ended, as the loop acts on it.
enum GenerationEnd {
    Finished(FinishReason),
    /// DSH dropped the stream before its finish.
    Dropped,
    /// The user stopped the run: DSH cancelled it and stopped reading the stream.
    Stopped,
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
            next_message: 1,
            session_id: format!("dsh-sim-{}", uuid_like()),
            faults: Arc::new(FaultPlan::default()),
            image_next: false,
            images: std::collections::HashMap::new(),
        }
    }

    /// The next user message starts with an image (a 1x1 PNG), then its text.
    pub fn attach_image_to_next_message(&mut self) {
        self.image_next = true;
    }

    /// Gives the chat a DSH fault (`dsh.fault`); its chunk count goes on across chats
    /// that share the plan.
    pub fn set_faults(&mut self, plan: Arc<FaultPlan>) {
        self.faults = plan;
    }

    /// A fresh message id of this chat.
    fn message_id(&mut self) -> String {
        let id = format!("{}-m{}", self.session_id, self.next_message);
        self.next_message += 1;
        id
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
        let mut message = Message::user(text);
        if std::mem::take(&mut self.image_next) {
            let id = format!("{}-image{}", self.session_id, self.images.len() + 1);
            let (block, bytes) = crate::host::attachments::pixel_image(&id);
            message.content.insert(0, block);
            self.images.insert(id, bytes);
        }
        message.id = Some(self.message_id());
        message.source = serde_json::json!({"kind": "user"});
        self.history.push(message);
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
            let started = std::time::Instant::now();
            let stream = self.adapter.stream(request);
            let Some(run) = transcript.runs.last_mut() else {
                return host_failure("the run record vanished");
            };
            run.generations.push(GenerationRecord {
                request: summary,
                parts: Vec::new(),
                terminal_after: None,
            });
            let Some(record) = run.generations.last_mut() else {
                return host_failure("the generation record vanished");
            };
            let mut terminal_at = None;
            let end = self
                .consume(stream, abort, &mut record.parts, &mut terminal_at)
                .await;
            record.terminal_after = terminal_at.map(|at: std::time::Instant| at - started);
            let parts = record.parts.clone();
            match end {
                GenerationEnd::Finished(FinishReason::Error { .. })
                    if self.faults.retry_refused() =>
                {
                    // A bent history was refused: DSH sends the complete one.
                }
                GenerationEnd::Finished(FinishReason::Error { failure }) => {
                    return RunOutcome::Failed { failure };
                }
                GenerationEnd::Finished(FinishReason::Aborted { failure }) => {
                    self.keep_interrupted(&parts);
                    return RunOutcome::Aborted { failure };
                }
                GenerationEnd::Dropped => return RunOutcome::DroppedByDsh,
                GenerationEnd::Stopped => {
                    self.keep_interrupted(&parts);
                    return RunOutcome::Aborted {
                        failure: stopped_by_user(),
                    };
                }
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
                    let message = self.assistant(assemble(&parts));
                    self.history.push(message);
                    return RunOutcome::Finished {
                        reason: FinishKind::of(&reason),
                    };
                }
            }
        }
        host_failure(&format!(
            "no final answer after {} generations",
            self.limits.max_generations_per_run
        ))
    }

    /// DSH's request as its loop builds one: provider and model, the whole history, the
    /// system prompt, the current tools, the session id, no purpose and no sampling
    /// controls.
    fn request(&self) -> GenerateOptions {
        let (provider, model) = split_model(&self.setup.model).unwrap_or((&self.setup.model, ""));
        let history = self.faults.shape_history(self.history.clone());
        let mut request = GenerateOptions::new(provider, model, history);
        request.system = Some(self.setup.system.clone()).filter(|s| !s.is_empty());
        request.tools = Some(
            self.setup
                .tools
                .iter()
                .map(|t| t.definition.clone())
                .collect(),
        );
        request.session_id = Some(self.session_id.clone());
        request.max_tokens = self.setup.max_tokens;
        request.signal = self.run_abort.clone();
        request.images.clone_from(&self.images);
        request
    }

    /// The assistant message DSH stores for `blocks`.
    fn assistant(&mut self, blocks: Vec<ContentBlock>) -> Message {
        let id = self.message_id();
        assistant_message(id, blocks, &self.setup.model)
    }

    /// What DSH keeps of an interrupted generation: its text and reasoning, if any.
    fn keep_interrupted(&mut self, parts: &[StreamChunk]) {
        let blocks = interrupted(parts);
        if !blocks.is_empty() {
            let message = self.assistant(blocks);
            self.history.push(message);
        }
    }

    /// Reads the stream to its end, recording and validating every chunk; a disposal DSH
    /// started meanwhile (`dsh.fault: dispose`) is awaited before it returns.
    async fn consume(
        &self,
        stream: ChunkStream,
        abort: Option<AbortPoint>,
        parts: &mut Vec<StreamChunk>,
        terminal_at: &mut Option<std::time::Instant>,
    ) -> GenerationEnd {
        let mut disposing = None;
        let end = self
            .consume_to_end(stream, abort, parts, terminal_at, &mut disposing)
            .await;
        if let Some(dispose) = disposing {
            dispose.await;
        }
        end
    }

    async fn consume_to_end<'a>(
        &'a self,
        mut stream: ChunkStream,
        abort: Option<AbortPoint>,
        parts: &mut Vec<StreamChunk>,
        terminal_at: &mut Option<std::time::Instant>,
        disposing: &mut Option<futures::future::BoxFuture<'a, ()>>,
    ) -> GenerationEnd {
        let mut validator = StreamValidator::new();
        let terminal = loop {
            let Some(item) = next_chunk(&mut stream, disposing).await else {
                return match validator.end_of_stream() {
                    Ok(()) => GenerationEnd::Violation("the stream ended twice".to_owned()),
                    Err(message) => GenerationEnd::Violation(message),
                };
            };
            let delta = matches!(
                item,
                StreamChunk::TextDelta { .. }
                    | StreamChunk::ReasoningDelta { .. }
                    | StreamChunk::ToolCallDelta { .. }
            );
            if delta && abort == Some(AbortPoint::OnFirstDeltaReadingOn) {
                self.run_abort.cancel();
            }
            if delta && abort == Some(AbortPoint::OnFirstDelta) {
                // DSH's loop (`ReactLoopAgent.step`) checks its turn signal before it
                // takes each chunk: it takes the delta the user saw, asks for one more
                // chunk, throws on it unread and closes the stream.
                if let Err(message) = validator.observe(&item) {
                    return GenerationEnd::Violation(message);
                }
                parts.push(item);
                self.run_abort.cancel();
                let _unread =
                    tokio::time::timeout(self.limits.stream_close_bound, stream.recv()).await;
                drop(stream);
                return GenerationEnd::Stopped;
            }
            if delta && abort == Some(AbortPoint::DropOnFirstDelta) {
                parts.push(item);
                drop(stream);
                return GenerationEnd::Dropped;
            }
            match self.faults.on_chunk() {
                Some(ChunkAction::Abort) => self.run_abort.cancel(),
                Some(ChunkAction::Drop) => {
                    parts.push(item);
                    drop(stream);
                    return GenerationEnd::Dropped;
                }
                Some(ChunkAction::Dispose) => *disposing = Some(self.adapter.dispose()),
                None => {}
            }
            parts.push(item.clone());
            match validator.observe(&item) {
                Err(message) => return GenerationEnd::Violation(message),
                Ok(Progress::Continue) => {}
                Ok(Progress::Terminal) => {
                    *terminal_at = Some(std::time::Instant::now());
                    break item;
                }
            }
        };
        // Nothing may follow the terminal item, and the stream must end.
        let closed = next_chunk(&mut stream, disposing);
        match tokio::time::timeout(self.limits.stream_close_bound, closed).await {
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
            StreamChunk::Finish { reason, .. } => GenerationEnd::Finished(reason),
            other => GenerationEnd::Violation(format!("non-terminal {other:?} ended the stream")),
        }
    }

    /// DSH's record of a tool round the user aborted: the assistant's calls, each
    /// answered with an error result, none executed (the history stays consistent).
    fn record_aborted_tools(&mut self, parts: &[StreamChunk]) {
        let assistant = self.assistant(assemble(parts));
        let results: Vec<Message> = tool_calls(&assistant)
            .map(|call| result_message(&call.id, &Value::from(ABORTED_BY_USER), true))
            .collect();
        self.history.push(assistant);
        self.history.extend(results);
    }

    /// DSH's side of finish(tool-calls): permissions, execution, durable results.
    async fn run_tools(
        &mut self,
        parts: &[StreamChunk],
        transcript: &mut Transcript,
    ) -> Result<(), String> {
        let assistant = self.assistant(assemble(parts));
        self.faults
            .title_beside_parked(
                self.adapter.as_ref(),
                &self.setup.model,
                &self.session_id,
                self.run_abort.child_token(),
            )
            .await?;
        let mut results = Vec::new();
        for call in tool_calls(&assistant) {
            if !self.seen_call_ids.insert(call.id.clone()) {
                return Err(format!("call id `{}` was used before", call.id));
            }
            let tool = self
                .setup
                .tools
                .iter()
                .find(|t| t.definition.name == call.name)
                .ok_or_else(|| format!("tool call for `{}`, which DSH did not offer", call.name))?;
            if let (true, Some(answers)) = (tool.permission.runs(), tool.hold_until_fake_answers) {
                self.faults.hold_for_answers(answers).await;
            }
            if tool.permission.runs() && !tool.duration.is_zero() {
                // A slow tool: the scripted world's own time, not a wait for an event.
                tokio::time::sleep(tool.duration).await;
            }
            let side_run = match (tool.permission.runs(), &tool.behaviour) {
                (true, ToolBehaviour::Subagent(task)) => {
                    Some(self.run_subagent(task, transcript).await)
                }
                (true, ToolBehaviour::TitleRequest(text)) => Some(
                    crate::host::side_requests::title(
                        self.adapter.as_ref(),
                        &self.setup.model,
                        text,
                        &self.session_id,
                        self.run_abort.child_token(),
                    )
                    .await,
                ),
                _ => None,
            };
            let handled = match side_run {
                Some((output, is_error)) => Handled {
                    result: result_message(&call.id, &Value::String(output), is_error),
                    executed: true,
                },
                None => handle_call(tool, call),
            };
            if handled.executed {
                *transcript.executions.entry(call.name.clone()).or_insert(0) += 1;
            }
            let mut result = handled.result;
            result.id = Some(self.message_id());
            results.push(result);
        }
        self.faults.hold_results().await;
        self.history.push(assistant);
        self.history.extend(results);
        Ok(())
    }
}

/// The tool calls of an assistant message.
fn tool_calls(message: &Message) -> impl Iterator<Item = &ToolCallBlock> {
    message.tool_calls()
}

/// A short random hex id (a chat's session id), from the clock and the process.
fn uuid_like() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{:x}{:x}", std::process::id(), nanos)
}

fn host_failure(message: &str) -> RunOutcome {
    RunOutcome::HostFailure {
        message: message.to_owned(),
    }
}
