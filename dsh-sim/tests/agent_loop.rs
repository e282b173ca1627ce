#![allow(clippy::unwrap_used, clippy::expect_used)]
//! DSH's agent loop and stream rules, judged against a scripted in-process adapter (a
//! test double for the loop logic only; the real adapter is judged by the scenarios).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use antigravity_acp::contract::{
    AssistantPart, BlockKind, FinishReason, GenerateRequest, LlmAdapter, LlmError, LlmErrorCode,
    Message, ModelInfo, PartSender, PartStream, Purpose, SamplingOptions, StreamPart,
    ToolDefinition, UserPart,
};
use dsh_sim::host::agent_loop::{ABORTED_BY_USER, AgentLoop, ChatSetup, LoopLimits};
use dsh_sim::host::tools::{HostTool, PERMISSION_DENIED, ToolBehaviour};
use dsh_sim::host::transcript::{RunOutcome, Transcript};
use dsh_sim::scenario::{AbortPoint, Permission};
use futures::future::BoxFuture;
use rstest::rstest;
use serde_json::json;

type Item = Result<StreamPart, LlmError>;

/// Plays one scripted stream per generate call and remembers every request.
#[derive(Default)]
struct ScriptedAdapter {
    streams: Mutex<VecDeque<Vec<Item>>>,
    requests: Mutex<Vec<GenerateRequest>>,
    keep_streams_open: bool,
    held_open: Mutex<Vec<PartSender>>,
}

impl ScriptedAdapter {
    fn new(streams: Vec<Vec<Item>>) -> Arc<Self> {
        Arc::new(Self {
            streams: Mutex::new(streams.into()),
            ..Self::default()
        })
    }

    fn requests(&self) -> Vec<GenerateRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl LlmAdapter for ScriptedAdapter {
    fn id(&self) -> &str {
        "scripted"
    }

    fn models(&self) -> Vec<ModelInfo> {
        vec![ModelInfo {
            id: "scripted/one".into(),
            display_name: "one".into(),
        }]
    }

    fn generate(&self, request: GenerateRequest) -> PartStream {
        self.requests.lock().unwrap().push(request);
        let script = self.streams.lock().unwrap().pop_front().unwrap_or_default();
        let (sender, stream) = PartStream::channel();
        // Scripts are shorter than the channel's capacity, so every send completes at once.
        futures::executor::block_on(async {
            for item in script {
                match item {
                    Ok(part) => assert!(sender.send(part).await),
                    Err(error) => assert!(sender.fail(error).await),
                }
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

fn start(index: u32, kind: BlockKind) -> Item {
    Ok(StreamPart::BlockStart { index, kind })
}
fn delta(index: u32, text: &str) -> Item {
    Ok(StreamPart::BlockDelta {
        index,
        delta: text.into(),
    })
}
fn end(index: u32) -> Item {
    Ok(StreamPart::BlockEnd { index })
}
fn call(index: u32, id: &str, tool: &str) -> Item {
    Ok(StreamPart::ToolCall {
        index,
        call_id: id.into(),
        tool_name: tool.into(),
        arguments: json!({ "path": "a.txt" }),
    })
}
fn finish(reason: FinishReason) -> Item {
    Ok(StreamPart::Finish { reason })
}
fn text_answer(text: &str) -> Vec<Item> {
    vec![
        start(0, BlockKind::Text),
        delta(0, text),
        end(0),
        finish(FinishReason::Stop),
    ]
}

fn tool(name: &str, permission: Permission, behaviour: ToolBehaviour) -> HostTool {
    HostTool {
        definition: ToolDefinition {
            name: name.into(),
            description: String::new(),
            input_schema: json!({ "type": "object" }),
        },
        permission,
        behaviour,
        duration: std::time::Duration::ZERO,
    }
}

fn setup(tools: Vec<HostTool>) -> ChatSetup {
    ChatSetup {
        model: "scripted/one".into(),
        system: "be brief".into(),
        tools,
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

#[tokio::test]
async fn a_text_answer_finishes_the_run_and_joins_the_history() {
    let adapter = ScriptedAdapter::new(vec![text_answer("hello")]);
    let (transcript, chat) = run(adapter.clone(), vec![], &["hi"]).await;
    assert_eq!(
        transcript.runs[0].outcome,
        RunOutcome::Finished {
            reason: FinishReason::Stop
        }
    );
    assert_eq!(
        chat.history(),
        [
            Message::User(vec![UserPart::Text("hi".into())]),
            Message::Assistant(vec![AssistantPart::Text("hello".into())]),
        ]
    );
}

#[tokio::test]
async fn every_request_carries_model_system_complete_history_tools_and_the_abort_signal() {
    let adapter = ScriptedAdapter::new(vec![text_answer("one"), text_answer("two")]);
    let tools = vec![read_file(Permission::Allow)];
    let (_, chat) = run(adapter.clone(), tools, &["first", "second"]).await;
    let requests = adapter.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.model, "scripted/one");
        assert_eq!(request.system, "be brief");
        assert_eq!(request.purpose, Purpose::Chat);
        assert_eq!(request.sampling, SamplingOptions::default());
        assert_eq!(request.tools.len(), 1);
        assert_eq!(request.tools[0].name, "read_file");
    }
    assert_eq!(requests[1].history.len(), 3, "user, assistant, user");
    assert_eq!(requests[1].history[..2], chat.history()[..2]);
    chat.abort_signal().cancel();
    assert!(requests.iter().all(|r| r.abort.is_cancelled()));
}

#[tokio::test]
async fn an_allowed_call_is_executed_and_its_result_answers_the_call_id() {
    let adapter = ScriptedAdapter::new(vec![
        vec![
            start(0, BlockKind::Reasoning),
            delta(0, "let me look"),
            end(0),
            call(1, "c-1", "read_file"),
            finish(FinishReason::ToolCalls),
        ],
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
            reason: FinishReason::Stop
        }
    );
    assert_eq!(transcript.executions.get("read_file"), Some(&1));
    let history = &adapter.requests()[1].history;
    let Message::Assistant(parts) = &history[1] else {
        panic!("{history:?}")
    };
    assert_eq!(parts[0], AssistantPart::Reasoning("let me look".into()));
    let AssistantPart::ToolCall(made) = &parts[1] else {
        panic!("{parts:?}")
    };
    assert_eq!(
        (made.call_id.as_str(), made.tool_name.as_str()),
        ("c-1", "read_file")
    );
    let Message::Tool(results) = &history[2] else {
        panic!("{history:?}")
    };
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].call_id, "c-1");
    assert_eq!(results[0].output, json!({ "text": "hi" }));
    assert!(!results[0].is_error);
}

#[tokio::test]
async fn a_denied_call_is_not_executed_and_answers_with_an_error() {
    let adapter = ScriptedAdapter::new(vec![
        vec![call(0, "c-1", "read_file"), finish(FinishReason::ToolCalls)],
        text_answer("denied"),
    ]);
    let (transcript, _) = run(adapter.clone(), vec![read_file(Permission::Deny)], &["go"]).await;
    assert_eq!(transcript.executions.get("read_file"), None);
    let Message::Tool(results) = &adapter.requests()[1].history[2] else {
        panic!()
    };
    assert!(results[0].is_error);
    assert_eq!(results[0].output, json!(PERMISSION_DENIED));
}

#[tokio::test]
async fn a_failing_tool_runs_and_answers_with_its_error() {
    let adapter = ScriptedAdapter::new(vec![
        vec![call(0, "c-1", "write"), finish(FinishReason::ToolCalls)],
        text_answer("failed"),
    ]);
    let failing = tool(
        "write",
        Permission::Allow,
        ToolBehaviour::Fails("disk full".into()),
    );
    let (transcript, _) = run(adapter.clone(), vec![failing], &["go"]).await;
    assert_eq!(transcript.executions.get("write"), Some(&1));
    let Message::Tool(results) = &adapter.requests()[1].history[2] else {
        panic!()
    };
    assert!(results[0].is_error);
    assert_eq!(results[0].output, json!("disk full"));
}

#[tokio::test]
async fn an_error_ends_the_run_without_joining_the_history() {
    let error = LlmError::new(LlmErrorCode::ServerUnavailable, "gone");
    let adapter = ScriptedAdapter::new(vec![vec![start(0, BlockKind::Text), Err(error.clone())]]);
    let (transcript, chat) = run(adapter, vec![], &["hi"]).await;
    assert_eq!(transcript.runs[0].outcome, RunOutcome::Failed { error });
    assert_eq!(chat.history().len(), 1);
}

#[tokio::test]
async fn endless_tool_rounds_stop_at_the_generation_limit() {
    let round = |id: &str| vec![call(0, id, "read_file"), finish(FinishReason::ToolCalls)];
    let adapter = ScriptedAdapter::new(vec![
        round("a"),
        round("b"),
        round("c"),
        round("d"),
        round("e"),
    ]);
    let (transcript, _) = run(adapter, vec![read_file(Permission::Allow)], &["go"]).await;
    assert!(matches!(
        transcript.runs[0].outcome,
        RunOutcome::HostFailure { .. }
    ));
}

#[rstest]
#[case::delta_before_start(vec![delta(0, "x"), finish(FinishReason::Stop)], "not open")]
#[case::index_skipped(vec![start(1, BlockKind::Text), end(1), finish(FinishReason::Stop)], "next block index is 0")]
#[case::index_reused(vec![start(0, BlockKind::Text), end(0), start(0, BlockKind::Text), end(0), finish(FinishReason::Stop)], "next block index is 1")]
#[case::block_open_at_finish(vec![start(0, BlockKind::Text), finish(FinishReason::Stop)], "still open")]
#[case::end_twice(vec![start(0, BlockKind::Text), end(0), end(0), finish(FinishReason::Stop)], "not open")]
#[case::two_finishes(vec![finish(FinishReason::Stop), finish(FinishReason::Stop)], "after the terminal item")]
#[case::part_after_error(vec![Err(LlmError::new(LlmErrorCode::Internal, "x")), start(0, BlockKind::Text)], "after the terminal item")]
#[case::no_terminal(vec![start(0, BlockKind::Text), end(0)], "without a finish")]
#[case::tool_finish_without_calls(vec![finish(FinishReason::ToolCalls)], "without any tool_call")]
#[case::calls_with_stop(vec![call(0, "c", "read_file"), finish(FinishReason::Stop)], "finish was stop")]
#[case::tool_not_offered(vec![call(0, "c", "rm_rf"), finish(FinishReason::ToolCalls)], "did not offer")]
#[case::empty_call_id(vec![call(0, "", "read_file"), finish(FinishReason::ToolCalls)], "empty call_id")]
#[tokio::test]
async fn stream_protocol_violations_fail_the_run(
    #[case] stream: Vec<Item>,
    #[case] expected: &str,
) {
    let adapter = ScriptedAdapter::new(vec![stream]);
    let (transcript, _) = run(adapter, vec![read_file(Permission::Allow)], &["go"]).await;
    match &transcript.runs[0].outcome {
        RunOutcome::Violation { message } => assert!(message.contains(expected), "{message}"),
        other => panic!("expected a violation containing {expected:?}, got {other}"),
    }
}

#[tokio::test]
async fn a_reused_call_id_is_a_violation() {
    let adapter = ScriptedAdapter::new(vec![
        vec![
            call(0, "same", "read_file"),
            finish(FinishReason::ToolCalls),
        ],
        vec![
            call(0, "same", "read_file"),
            finish(FinishReason::ToolCalls),
        ],
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
        vec![call(0, "c-1", "read_file"), finish(FinishReason::ToolCalls)],
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
    let Message::Tool(results) = &aborted.chat.history()[2] else {
        panic!("{:?}", aborted.chat.history())
    };
    assert!(results[0].is_error);
    assert_eq!(results[0].output, json!(ABORTED_BY_USER));
}

#[tokio::test]
async fn aborting_on_tool_calls_cancels_only_that_runs_signal() {
    let mut aborted = aborted_on_tool_calls().await;
    assert!(aborted.adapter.requests()[0].abort.is_cancelled());
    // The next run gets a fresh, uncancelled signal.
    aborted
        .chat
        .run_user_message("again", &mut aborted.transcript)
        .await;
    assert!(!aborted.adapter.requests()[1].abort.is_cancelled());
}

/// A chat whose only run DSH aborts on the first text delta.
async fn aborted_on_first_delta() -> (Arc<ScriptedAdapter>, AgentLoop, RunOutcome) {
    let adapter = ScriptedAdapter::new(vec![vec![
        start(0, BlockKind::Text),
        delta(0, "partial"),
        end(0),
        finish(FinishReason::Cancelled),
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
    assert!(adapter.requests()[0].abort.is_cancelled());
    assert!(!chat.abort_signal().is_cancelled(), "only the run's signal");
}

#[tokio::test]
async fn aborting_on_the_first_delta_reads_to_the_terminal_item() {
    let (_, _, outcome) = aborted_on_first_delta().await;
    assert_eq!(
        outcome,
        RunOutcome::Finished {
            reason: FinishReason::Cancelled
        }
    );
}
