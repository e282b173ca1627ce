#![allow(clippy::unwrap_used, clippy::expect_used)]
//! DSH's agent loop and stream rules, judged against a scripted in-process adapter (a
//! test double for the loop logic only; the real adapter is judged by the scenarios).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use antigravity_acp::contract::{
    ChunkSender, ChunkStream, ContentBlock, ContentBlockType, FinishReason, GenerateOptions,
    LlmAdapter, LlmError, LlmErrorCode, LlmFailure, LlmModelInfo, LlmProviderInfo,
    LlmResolvedModelInfo, Message, RetryPolicy, Role, StreamChunk, TextBlock, TokenUsage,
    ToolCallBlock, ToolSchema,
};
use dsh_sim::host::agent_loop::{ABORTED_BY_USER, AgentLoop, ChatSetup, LoopLimits};
use dsh_sim::host::tools::{HostTool, PERMISSION_DENIED, ToolBehaviour};
use dsh_sim::host::transcript::{RunOutcome, Transcript};
use dsh_sim::scenario::FinishKind;
use dsh_sim::scenario::{AbortPoint, Permission};
use futures::future::BoxFuture;
use rstest::rstest;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Plays one scripted stream per `stream` call and remembers every request.
#[derive(Default)]
struct ScriptedAdapter {
    streams: Mutex<VecDeque<Vec<StreamChunk>>>,
    requests: Mutex<Vec<GenerateOptions>>,
    keep_streams_open: bool,
    held_open: Mutex<Vec<ChunkSender>>,
}

impl ScriptedAdapter {
    fn new(streams: Vec<Vec<StreamChunk>>) -> Arc<Self> {
        Arc::new(Self {
            streams: Mutex::new(streams.into()),
            ..Self::default()
        })
    }

    fn requests(&self) -> Vec<GenerateOptions> {
        self.requests.lock().unwrap().clone()
    }
}

fn scripted_model() -> LlmModelInfo {
    LlmModelInfo {
        provider: "scripted".into(),
        id: "one".into(),
        name: "one".into(),
        description: None,
        input_modalities: None,
    }
}

impl LlmAdapter for ScriptedAdapter {
    fn provider_info(&self, provider: &str) -> LlmProviderInfo {
        LlmProviderInfo {
            id: provider.into(),
            name: "scripted".into(),
        }
    }

    fn provider_retry_policy(&self, _provider: &str) -> Option<RetryPolicy> {
        None
    }

    fn list_models(&self, _provider: &str) -> BoxFuture<'_, Result<Vec<LlmModelInfo>, LlmError>> {
        Box::pin(async { Ok(vec![scripted_model()]) })
    }

    fn resolve_model(
        &self,
        _provider: &str,
        _model: &str,
        _signal: CancellationToken,
    ) -> BoxFuture<'_, Result<LlmResolvedModelInfo, LlmError>> {
        Box::pin(async {
            Ok(LlmResolvedModelInfo {
                model: scripted_model(),
                context: None,
            })
        })
    }

    fn stream(&self, options: GenerateOptions) -> ChunkStream {
        self.requests.lock().unwrap().push(options);
        let script = self.streams.lock().unwrap().pop_front().unwrap_or_default();
        let (sender, stream) = ChunkStream::channel();
        // Scripts are shorter than the channel's capacity, so every send completes at once.
        futures::executor::block_on(async {
            for chunk in script {
                assert!(sender.send(chunk).await);
            }
        });
        if self.keep_streams_open {
            self.held_open.lock().unwrap().push(sender);
        }
        stream
    }

    fn dispose(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// The arguments every scripted call carries unless a test says otherwise.
const ARGUMENTS: &str = r#"{"path":"a.txt"}"#;

fn start(index: u32, block_type: ContentBlockType) -> StreamChunk {
    StreamChunk::BlockStart { index, block_type }
}
fn text(index: u32, text: &str) -> StreamChunk {
    StreamChunk::TextDelta {
        index,
        text: text.into(),
    }
}
fn thought(index: u32, text: &str) -> StreamChunk {
    StreamChunk::ReasoningDelta {
        index,
        text: text.into(),
    }
}
fn end(index: u32, block: ContentBlock) -> StreamChunk {
    StreamChunk::BlockEnd { index, block }
}
fn end_text(index: u32, text: &str) -> StreamChunk {
    end(index, ContentBlock::text(text))
}
fn call_block(id: &str, tool: &str, arguments: &str) -> ContentBlock {
    ContentBlock::ToolCall(ToolCallBlock {
        id: id.into(),
        name: tool.into(),
        arguments: arguments.into(),
    })
}
fn call_delta(index: u32, id: &str, tool: &str, arguments: &str) -> StreamChunk {
    StreamChunk::ToolCallDelta {
        index,
        id: id.into(),
        name: Some(tool.into()),
        arguments_delta: arguments.into(),
    }
}
/// A tool call as the adapter streams one: block-start, one tool-call-delta with the
/// whole arguments, block-end with the assembled block.
fn call_with(index: u32, id: &str, tool: &str, arguments: &str) -> Vec<StreamChunk> {
    vec![
        start(index, ContentBlockType::ToolCall),
        call_delta(index, id, tool, arguments),
        end(index, call_block(id, tool, arguments)),
    ]
}
fn call(index: u32, id: &str, tool: &str) -> Vec<StreamChunk> {
    call_with(index, id, tool, ARGUMENTS)
}
fn finish(reason: FinishReason) -> StreamChunk {
    StreamChunk::finish(reason)
}
fn failure(code: LlmErrorCode, message: &str) -> LlmFailure {
    LlmError::new(code, message).to_failure()
}
fn usage() -> StreamChunk {
    StreamChunk::Usage {
        usage: TokenUsage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: None,
            cache_write_tokens: None,
            reasoning_tokens: None,
        },
    }
}
fn text_answer(answer: &str) -> Vec<StreamChunk> {
    vec![
        start(0, ContentBlockType::Text),
        text(0, answer),
        end_text(0, answer),
        finish(FinishReason::Stop),
    ]
}
/// One tool round: a call, then finish(tool-calls).
fn tool_round(id: &str, tool: &str) -> Vec<StreamChunk> {
    [call(0, id, tool), vec![finish(FinishReason::ToolCalls)]].concat()
}

fn tool(name: &str, permission: Permission, behaviour: ToolBehaviour) -> HostTool {
    HostTool {
        definition: ToolSchema {
            name: name.into(),
            description: String::new(),
            parameters: json!({ "type": "object" }),
        },
        permission,
        behaviour,
        duration: Duration::ZERO,
        hold_until_fake_answers: None,
    }
}

fn setup(tools: Vec<HostTool>) -> ChatSetup {
    ChatSetup {
        model: "scripted/one".into(),
        system: "be brief".into(),
        tools,
        max_tokens: None,
    }
}

fn limits() -> LoopLimits {
    LoopLimits {
        max_generations_per_run: 4,
        stream_close_bound: Duration::from_millis(200),
    }
}

async fn run(
    adapter: Arc<ScriptedAdapter>,
    tools: Vec<HostTool>,
    users: &[&str],
) -> (Transcript, AgentLoop) {
    let mut chat = AgentLoop::new(adapter, setup(tools), limits());
    let mut transcript = Transcript::default();
    for user in users {
        chat.run_user_message(user, &mut transcript).await;
    }
    (transcript, chat)
}

fn read_file(permission: Permission) -> HostTool {
    tool(
        "read_file",
        permission,
        ToolBehaviour::Output(json!({ "text": "hi" })),
    )
}

/// The single tool result `message` carries, asserting it is DSH's tool-result message (a
/// user message with exactly one `tool-result` block, sourced from the tool).
fn only_result(message: &Message) -> (String, Vec<ContentBlock>, bool) {
    assert_eq!(message.role, Role::User, "{message:?}");
    assert_eq!(message.content.len(), 1, "{message:?}");
    let results = message.tool_results();
    assert_eq!(results.len(), 1, "{message:?}");
    let result = results[0];
    assert_eq!(message.source["kind"], "tool", "{message:?}");
    assert_eq!(message.source["callId"], result.call_id, "{message:?}");
    (
        result.call_id.to_owned(),
        result.content.to_vec(),
        result.is_error,
    )
}

#[tokio::test]
async fn a_text_answer_finishes_the_run_and_joins_the_history() {
    let adapter = ScriptedAdapter::new(vec![text_answer("hello")]);
    let (transcript, chat) = run(adapter.clone(), vec![], &["hi"]).await;
    assert_eq!(
        transcript.runs[0].outcome,
        RunOutcome::Finished {
            reason: FinishKind::Stop
        }
    );
    let history: Vec<(Role, Vec<ContentBlock>)> = chat
        .history()
        .iter()
        .map(|m| (m.role, m.content.clone()))
        .collect();
    assert_eq!(
        history,
        [
            (Role::User, vec![ContentBlock::text("hi")]),
            (Role::Assistant, vec![ContentBlock::text("hello")]),
        ]
    );
    assert_eq!(chat.history()[0].source["kind"], "user");
    assert_eq!(chat.history()[1].source["kind"], "model");
}

#[tokio::test]
async fn every_request_carries_model_system_complete_history_tools_and_the_abort_signal() {
    let adapter = ScriptedAdapter::new(vec![text_answer("one"), text_answer("two")]);
    let tools = vec![read_file(Permission::Allow)];
    let offered = tools[0].definition.clone();
    let (_, chat) = run(adapter.clone(), tools, &["first", "second"]).await;
    let requests = adapter.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(
            (request.provider.as_str(), request.model.as_str()),
            ("scripted", "one")
        );
        assert_eq!(request.system.as_deref(), Some("be brief"));
        assert_eq!(request.purpose, None);
        assert_eq!(
            (
                request.reasoning_effort.as_deref(),
                request.temperature,
                request.max_tokens,
                request.stop.as_deref(),
            ),
            (None, None, None, None),
            "no sampling controls"
        );
        assert!(request.unsupported_controls().is_empty());
        assert_eq!(request.tools, Some(vec![offered.clone()]));
        assert!(request.images.is_empty());
    }
    assert_eq!(requests[1].messages.len(), 3, "user, assistant, user");
    assert_eq!(requests[1].messages[..2], chat.history()[..2]);
    assert!(requests.iter().all(|r| !r.signal.is_cancelled()));
    chat.abort_signal().cancel();
    assert!(requests.iter().all(|r| r.signal.is_cancelled()));
}

#[tokio::test]
async fn requests_carry_the_session_no_purpose_and_the_tool_round_in_the_history() {
    let first = [
        call(0, "c-1", "read_file"),
        call(1, "c-2", "read_file"),
        vec![finish(FinishReason::ToolCalls)],
    ]
    .concat();
    let adapter = ScriptedAdapter::new(vec![first, text_answer("both say hi")]);
    let (transcript, chat) = run(
        adapter.clone(),
        vec![read_file(Permission::Allow)],
        &["read it twice"],
    )
    .await;
    assert_eq!(
        transcript.runs[0].outcome,
        RunOutcome::Finished {
            reason: FinishKind::Stop
        }
    );
    let requests = adapter.requests();
    assert_eq!(requests.len(), 2);
    let session = requests[0].session_id.clone();
    assert!(
        session.as_deref().is_some_and(|s| !s.is_empty()),
        "{session:?}"
    );
    for request in &requests {
        assert_eq!(request.session_id, session, "one session for the chat");
        assert_eq!(request.purpose, None);
    }

    let messages = &requests[1].messages;
    assert_eq!(
        messages.len(),
        4,
        "user, assistant, one result per call: {messages:?}"
    );
    let assistant = &messages[1];
    assert_eq!(assistant.role, Role::Assistant);
    assert_eq!(assistant.source["kind"], "model");
    assert_eq!(assistant.source["provider"], "scripted");
    assert_eq!(assistant.source["model"], "one");
    assert_eq!(
        assistant.content,
        [
            call_block("c-1", "read_file", ARGUMENTS),
            call_block("c-2", "read_file", ARGUMENTS),
        ]
    );
    let answered: Vec<String> = messages[2..].iter().map(|m| only_result(m).0).collect();
    assert_eq!(answered, ["c-1", "c-2"]);
    let ids: Vec<&str> = messages.iter().filter_map(|m| m.id.as_deref()).collect();
    assert_eq!(ids.len(), 4, "every message has an id: {messages:?}");
    assert!(
        ids.iter().enumerate().all(|(i, id)| !ids[..i].contains(id)),
        "message ids are unique: {ids:?}"
    );
    assert_eq!(messages[..], chat.history()[..4]);
}

#[tokio::test]
async fn an_allowed_call_is_executed_and_its_result_answers_the_call_id() {
    let adapter = ScriptedAdapter::new(vec![
        [
            vec![
                start(0, ContentBlockType::Reasoning),
                thought(0, "let me look"),
                end(0, ContentBlock::reasoning("let me look")),
            ],
            call(1, "c-1", "read_file"),
            vec![finish(FinishReason::ToolCalls)],
        ]
        .concat(),
        text_answer("it says hi"),
    ]);
    let (transcript, _) = run(
        adapter.clone(),
        vec![read_file(Permission::Allow)],
        &["read a.txt"],
    )
    .await;
    assert_eq!(
        transcript.runs[0].outcome,
        RunOutcome::Finished {
            reason: FinishKind::Stop
        }
    );
    assert_eq!(transcript.executions.get("read_file"), Some(&1));
    let history = &adapter.requests()[1].messages;
    assert_eq!(history.len(), 3, "{history:?}");
    assert_eq!(history[1].role, Role::Assistant);
    assert_eq!(
        history[1].content[0],
        ContentBlock::reasoning("let me look")
    );
    let made: Vec<(&str, &str)> = history[1]
        .tool_calls()
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect();
    assert_eq!(made, [("c-1", "read_file")]);
    let (call_id, content, is_error) = only_result(&history[2]);
    assert_eq!(call_id, "c-1");
    assert_eq!(
        content,
        [ContentBlock::text(json!({ "text": "hi" }).to_string())]
    );
    assert!(!is_error);
}

#[tokio::test]
async fn a_denied_call_is_not_executed_and_answers_with_an_error() {
    let adapter = ScriptedAdapter::new(vec![tool_round("c-1", "read_file"), text_answer("denied")]);
    let (transcript, _) = run(adapter.clone(), vec![read_file(Permission::Deny)], &["go"]).await;
    assert_eq!(transcript.executions.get("read_file"), None);
    let (call_id, content, is_error) = only_result(&adapter.requests()[1].messages[2]);
    assert_eq!(call_id, "c-1");
    assert!(is_error);
    assert_eq!(
        content,
        [ContentBlock::text(format!("Error: {PERMISSION_DENIED}"))]
    );
}

#[tokio::test]
async fn a_failing_tool_runs_and_answers_with_its_error() {
    let adapter = ScriptedAdapter::new(vec![tool_round("c-1", "write"), text_answer("failed")]);
    let failing = tool(
        "write",
        Permission::Allow,
        ToolBehaviour::Fails("disk full".into()),
    );
    let (transcript, _) = run(adapter.clone(), vec![failing], &["go"]).await;
    assert_eq!(transcript.executions.get("write"), Some(&1));
    let (call_id, content, is_error) = only_result(&adapter.requests()[1].messages[2]);
    assert_eq!(call_id, "c-1");
    assert!(is_error);
    assert_eq!(content, [ContentBlock::text("Error: disk full")]);
}

#[tokio::test]
async fn an_error_finish_ends_the_run_without_joining_the_history() {
    let gone = failure(LlmErrorCode::AcpDisconnected, "gone");
    let adapter = ScriptedAdapter::new(vec![vec![
        start(0, ContentBlockType::Text),
        text(0, "partial"),
        end_text(0, "partial"),
        finish(FinishReason::Error {
            failure: gone.clone(),
        }),
    ]]);
    let (transcript, chat) = run(adapter, vec![], &["hi"]).await;
    assert_eq!(
        transcript.runs[0].outcome,
        RunOutcome::Failed { failure: gone }
    );
    assert_eq!(chat.history().len(), 1, "{:?}", chat.history());
}

#[tokio::test]
async fn endless_tool_rounds_stop_at_the_generation_limit() {
    let adapter = ScriptedAdapter::new(
        ["a", "b", "c", "d", "e"]
            .into_iter()
            .map(|id| tool_round(id, "read_file"))
            .collect(),
    );
    let (transcript, _) = run(adapter.clone(), vec![read_file(Permission::Allow)], &["go"]).await;
    assert!(
        matches!(transcript.runs[0].outcome, RunOutcome::HostFailure { .. }),
        "{}",
        transcript.runs[0].outcome
    );
    assert_eq!(adapter.requests().len(), limits().max_generations_per_run);
}

#[tokio::test]
async fn usage_before_the_finish_is_accepted() {
    let mut stream = text_answer("hi");
    stream.insert(3, usage());
    let adapter = ScriptedAdapter::new(vec![stream]);
    let (transcript, _) = run(adapter, vec![], &["hi"]).await;
    assert_eq!(
        transcript.runs[0].outcome,
        RunOutcome::Finished {
            reason: FinishKind::Stop
        }
    );
}

fn stop() -> StreamChunk {
    finish(FinishReason::Stop)
}
fn tool_calls() -> StreamChunk {
    finish(FinishReason::ToolCalls)
}
fn text_start() -> StreamChunk {
    start(0, ContentBlockType::Text)
}

#[rstest]
#[case::delta_before_start(vec![text(0, "x"), stop()], "not open")]
#[case::index_skipped(vec![start(1, ContentBlockType::Text), end_text(1, ""), stop()], "next block index is 0")]
#[case::index_reused(vec![text_start(), end_text(0, ""), text_start(), end_text(0, ""), stop()], "next block index is 1")]
#[case::block_open_at_finish(vec![text_start(), stop()], "still open")]
#[case::block_open_at_error_finish(vec![text_start(), finish(FinishReason::Error { failure: failure(LlmErrorCode::AcpInternal, "x") })], "still open")]
#[case::end_twice(vec![text_start(), end_text(0, ""), end_text(0, ""), stop()], "not open")]
#[case::two_finishes(vec![stop(), stop()], "after the terminal item")]
#[case::chunk_after_error_finish(vec![finish(FinishReason::Error { failure: failure(LlmErrorCode::AcpInternal, "x") }), text_start()], "after the terminal item")]
#[case::tool_finish_without_calls(vec![tool_calls()], "without any tool call")]
#[case::calls_with_stop([call(0, "c", "read_file"), vec![stop()]].concat(), "finish was stop")]
#[case::tool_not_offered(tool_round("c", "rm_rf"), "did not offer")]
#[case::empty_call_id(tool_round("", "read_file"), "has an empty id")]
#[case::text_end_differs_from_its_deltas(
    vec![text_start(), text(0, "abc"), end_text(0, "abd"), stop()],
    "but its deltas assembled"
)]
#[case::end_of_another_type(
    vec![text_start(), text(0, "abc"), end(0, ContentBlock::reasoning("abc")), stop()],
    "but its deltas assembled"
)]
#[case::tool_call_end_differs_from_its_deltas(
    vec![
        start(0, ContentBlockType::ToolCall),
        call_delta(0, "c", "read_file", ARGUMENTS),
        end(0, call_block("c", "read_file", r#"{"path":"b.txt"}"#)),
        tool_calls(),
    ],
    "but its deltas assembled"
)]
#[case::tool_call_arguments_not_json(
    [call_with(0, "c", "read_file", r#"{"path": "a.txt""#), vec![tool_calls()]].concat(),
    "its arguments are not JSON"
)]
#[case::text_delta_into_a_reasoning_block(
    vec![start(0, ContentBlockType::Reasoning), text(0, "x"), end(0, ContentBlock::reasoning("x")), stop()],
    "text-delta for block 0, which is a Reasoning block"
)]
#[case::reasoning_delta_into_a_text_block(
    vec![text_start(), thought(0, "x"), end_text(0, "x"), stop()],
    "reasoning-delta for block 0, which is a Text block"
)]
#[case::delta_after_the_finish(
    [text_answer("hi"), vec![text(0, "more")]].concat(),
    r#"{"type":"text-delta","index":0,"text":"more"} after the terminal item"#
)]
#[case::usage_after_the_finish(
    [text_answer("hi"), vec![usage()]].concat(),
    r#"{"type":"usage","usage":{"inputTokens":1,"outputTokens":2}} after the terminal item"#
)]
#[case::tool_result_block_from_the_model(
    vec![start(0, ContentBlockType::ToolResult), stop()],
    "block-start of a ToolResult block"
)]
#[tokio::test]
async fn stream_protocol_violations_fail_the_run(
    #[case] stream: Vec<StreamChunk>,
    #[case] expected: &str,
) {
    let adapter = ScriptedAdapter::new(vec![stream]);
    let (transcript, _) = run(adapter, vec![read_file(Permission::Allow)], &["go"]).await;
    match &transcript.runs[0].outcome {
        RunOutcome::Violation { message } => assert!(message.contains(expected), "{message}"),
        other => panic!("expected a violation containing {expected:?}, got {other}"),
    }
}

/// A producer that goes away without its finish: the adapter's stream itself ends with an
/// `error` finish, code `ACP_INTERNAL` (never a silent end DSH would read as `stop`).
#[tokio::test]
async fn a_stream_without_its_finish_ends_acp_internal() {
    let adapter = ScriptedAdapter::new(vec![vec![text_start(), end_text(0, "")]]);
    let (transcript, _) = run(adapter, vec![read_file(Permission::Allow)], &["go"]).await;
    match &transcript.runs[0].outcome {
        RunOutcome::Failed { failure } => {
            assert_eq!(failure.code, "ACP_INTERNAL");
            assert!(
                failure.message.contains("without a finish"),
                "{}",
                failure.message
            );
        }
        other => panic!("expected an ACP_INTERNAL failure, got {other}"),
    }
}

#[tokio::test]
async fn a_reused_call_id_is_a_violation() {
    let adapter = ScriptedAdapter::new(vec![
        tool_round("same", "read_file"),
        tool_round("same", "read_file"),
    ]);
    let (transcript, _) = run(adapter, vec![read_file(Permission::Allow)], &["go"]).await;
    let RunOutcome::Violation { message } = &transcript.runs[0].outcome else {
        panic!("{}", transcript.runs[0].outcome)
    };
    assert!(message.contains("used before"), "{message}");
}

#[tokio::test]
async fn a_stream_left_open_after_its_finish_is_a_violation() {
    let adapter = Arc::new(ScriptedAdapter {
        streams: Mutex::new(vec![text_answer("hi")].into()),
        keep_streams_open: true,
        ..ScriptedAdapter::default()
    });
    let (transcript, _) = run(adapter, vec![], &["hi"]).await;
    let RunOutcome::Violation { message } = &transcript.runs[0].outcome else {
        panic!("{}", transcript.runs[0].outcome)
    };
    assert!(message.contains("stayed open"), "{message}");
}

/// A chat whose first run DSH aborts as the tool calls arrive.
struct AbortedOnToolCalls {
    adapter: Arc<ScriptedAdapter>,
    chat: AgentLoop,
    transcript: Transcript,
    outcome: RunOutcome,
}

async fn aborted_on_tool_calls() -> AbortedOnToolCalls {
    let adapter = ScriptedAdapter::new(vec![
        tool_round("c-1", "read_file"),
        text_answer("fresh start"),
    ]);
    let mut chat = AgentLoop::new(
        adapter.clone(),
        setup(vec![read_file(Permission::Allow)]),
        limits(),
    );
    let mut transcript = Transcript::default();
    let outcome = chat
        .run_user_message_aborting("go", AbortPoint::OnToolCalls, &mut transcript)
        .await;
    AbortedOnToolCalls {
        adapter,
        chat,
        transcript,
        outcome,
    }
}

#[tokio::test]
async fn aborting_on_tool_calls_runs_no_tool() {
    let aborted = aborted_on_tool_calls().await;
    assert_eq!(aborted.outcome, RunOutcome::AbortedWithToolsPending);
    assert!(aborted.transcript.executions.is_empty());
}

#[tokio::test]
async fn aborting_on_tool_calls_records_error_results() {
    let aborted = aborted_on_tool_calls().await;
    let history = aborted.chat.history();
    assert_eq!(history.len(), 3, "user, assistant, one result: {history:?}");
    let (call_id, content, is_error) = only_result(&history[2]);
    assert_eq!(call_id, "c-1");
    assert!(is_error);
    assert_eq!(
        content,
        [ContentBlock::text(format!("Error: {ABORTED_BY_USER}"))]
    );
}

#[tokio::test]
async fn aborting_on_tool_calls_cancels_only_that_runs_signal() {
    let mut aborted = aborted_on_tool_calls().await;
    assert!(aborted.adapter.requests()[0].signal.is_cancelled());
    // The next run gets a fresh, uncancelled signal.
    aborted
        .chat
        .run_user_message("again", &mut aborted.transcript)
        .await;
    assert!(!aborted.adapter.requests()[1].signal.is_cancelled());
}

/// What the adapter's `aborted` finish carries.
fn aborted_failure() -> LlmFailure {
    failure(LlmErrorCode::Aborted, "aborted by DSH")
}

/// A chat whose only run DSH aborts on the first text delta.
async fn aborted_on_first_delta() -> (Arc<ScriptedAdapter>, AgentLoop, RunOutcome) {
    let adapter = ScriptedAdapter::new(vec![vec![
        text_start(),
        text(0, "partial"),
        end_text(0, "partial"),
        finish(FinishReason::Aborted {
            failure: aborted_failure(),
        }),
    ]]);
    let mut chat = AgentLoop::new(adapter.clone(), setup(vec![]), limits());
    let mut transcript = Transcript::default();
    let outcome = chat
        .run_user_message_aborting("go", AbortPoint::OnFirstDelta, &mut transcript)
        .await;
    (adapter, chat, outcome)
}

#[tokio::test]
async fn aborting_on_the_first_delta_cancels_only_that_runs_signal() {
    let (adapter, chat, _) = aborted_on_first_delta().await;
    assert!(adapter.requests()[0].signal.is_cancelled());
    assert!(!chat.abort_signal().is_cancelled(), "only the run's signal");
}

/// DSH's loop takes the delta, asks for one more chunk and throws on it unread: the run
/// ends aborted with DSH's own cause, the adapter's finish never taken.
#[tokio::test]
async fn aborting_on_the_first_delta_stops_reading_the_stream() {
    let (_, _, outcome) = aborted_on_first_delta().await;
    assert_eq!(
        outcome,
        RunOutcome::Aborted {
            failure: dsh_sim::host::agent_loop::stopped_by_user()
        }
    );
}

#[tokio::test]
async fn an_aborted_generation_keeps_its_text_in_the_history() {
    let (_, chat, _) = aborted_on_first_delta().await;
    let history = chat.history();
    assert_eq!(history.len(), 2, "{history:?}");
    assert_eq!(history[1].role, Role::Assistant);
    assert_eq!(
        history[1].content,
        [ContentBlock::Text(TextBlock {
            text: "partial".into()
        })]
    );
}
