//! Driver edge cases, deterministic: each turn runs against the fake's in-process
//! `serve()` over a `tokio::io::duplex`, on a runtime whose clock is paused, so the model
//! and tool timeouts fire in virtual time, in order, without waiting. (The scenario suite
//! runs the same behaviours through real processes.)

use std::time::Duration;

use serde_json::json;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::*;
use crate::TestResult;
use crate::contract::{
    ChunkStream, ContentBlock, GenerateOptions, Message, StreamChunk, ToolSchema,
};
use crate::pool::ProcessPool;
use crate::turn::ends::stop_outcome;
use agent_client_protocol::v1::schema::StopReason;
use test_support::{Failure, real_time_watchdog, within};

/// A bound in virtual time: far beyond every timeout the tests configure.
const BOUND: Duration = Duration::from_secs(24 * 3600);
const MODEL_TIMEOUT: Duration = Duration::from_secs(600);
const TOOL_TIMEOUT: Duration = Duration::from_secs(170);
/// A bound in real time: on the paused clock a spinning turn loop stops virtual time, so
/// [`BOUND`] would never fire and the test would hang instead of failing.
const WATCHDOG: Duration = Duration::from_secs(60);

/// A turn running against the fake.
struct Running {
    turn: AbortOnDropHandle<()>,
    stream: ChunkStream,
    abort: CancellationToken,
    registry: Arc<ExchangeRegistry>,
    config: Arc<AdapterConfig>,
    pool: Arc<ProcessPool>,
    _server: AbortOnDropHandle<Result<(), fake_antigravity::ServeError>>,
    _scratch: tempfile::TempDir,
}

fn request(text: &str, tools: Vec<ToolSchema>) -> GenerateOptions {
    let mut request = GenerateOptions::new(
        "antigravity-acp",
        "server-default",
        vec![Message::user(text)],
    );
    request.tools = Some(tools);
    request
}

fn slow_tool() -> Vec<ToolSchema> {
    vec![ToolSchema {
        name: "slow".into(),
        description: "Takes its time".into(),
        parameters: json!({"type": "object"}),
    }]
}

/// The code of the failure a stream ends with: reads to its finish, which must carry one.
async fn failure_code(stream: &mut ChunkStream) -> Result<String, Failure> {
    loop {
        match within(BOUND, "the next chunk", stream.recv()).await? {
            Some(StreamChunk::Finish { reason, .. }) => {
                return match reason.failure() {
                    Some(failure) => Ok(failure.code.clone()),
                    None => {
                        Err(format!("the stream finished without a failure: {reason:?}").into())
                    }
                };
            }
            Some(_) => {}
            None => return Err("the stream ended without a finish".into()),
        }
    }
}

/// Starts a turn for `request` against the fake running `script` (YAML).
fn start_turn(script: &str, request: GenerateOptions) -> Result<Running, Failure> {
    start_turn_in(script, request, None)
}

/// As [`start_turn`], the request taking the no-tool `lane` when one is given.
fn start_turn_in(
    script: &str,
    request: GenerateOptions,
    lane: Option<NoToolLane>,
) -> Result<Running, Failure> {
    let script = fake_antigravity::parse_script(script)?;
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_reads, server_writes) = tokio::io::split(server);
    let options = fake_antigravity::ServeOptions::new(script);
    let server = AbortOnDropHandle::new(tokio::spawn(fake_antigravity::serve(
        options,
        server_reads,
        server_writes,
    )));
    let (client_reads, client_writes) = tokio::io::split(client);
    let launch = move |_: &LaunchLine, _: &Path| {
        Ok(ServerLink::Streams(
            Box::new(client_writes),
            Box::new(client_reads),
        ))
    };
    let scratch = tempfile::tempdir()?;
    let config = Arc::new(AdapterConfig {
        scratch_root: Some(scratch.path().to_path_buf()),
        timeout: MODEL_TIMEOUT,
        tool_timeout: TOOL_TIMEOUT,
        shutdown_grace: Duration::from_secs(2),
        // Never launched: the turn's server is the in-process fake on a duplex.
        server: crate::config::ServerCommand::default().into(),
        ..AdapterConfig::default()
    });
    let pool = ProcessPool::new(&config, CancellationToken::new());
    let (mut spec, stream) = spec_for(&config, &pool, &request)?;
    spec.lane = lane.as_ref().map(LanePlace::take);
    let registry = spec.registry.clone();
    Ok(Running {
        turn: AbortOnDropHandle::new(tokio::spawn(run_turn_with(spec, launch))),
        stream,
        abort: request.signal,
        registry,
        config,
        pool,
        _server: server,
        _scratch: scratch,
    })
}

/// A fresh tool turn's spec for `request`, on `pool`, and DSH's end of its stream.
fn spec_for(
    config: &Arc<AdapterConfig>,
    pool: &Arc<ProcessPool>,
    request: &GenerateOptions,
) -> Result<(TurnSpec, ChunkStream), Failure> {
    let catalog = match request.tools().is_empty() {
        true => None,
        false => Some(Arc::new(ToolCatalog::build(request.tools())?)),
    };
    let (sink, stream) = ChunkStream::channel();
    let spec = TurnSpec {
        config: config.clone(),
        launcher: Arc::new(ServerLauncher::new(config)),
        pool: pool.clone(),
        lane: None,
        model: None,
        prompt: build_prompt(request, catalog.as_deref())?,
        catalog,
        fingerprint: exchange::fingerprint_of(request),
        history: SegmentHistory::new(request.messages.clone()),
        sink,
        abort: request.signal.clone(),
        provider: CancellationToken::new(),
        registry: Arc::new(ExchangeRegistry::default()),
        id: 1,
        permit: Some(Arc::new(Semaphore::new(1)).try_acquire_owned()?),
        window: WindowReport::default(),
        max_tokens: request.max_tokens,
    };
    Ok((spec, stream))
}

impl Running {
    /// The stream's chunks up to and including its finish, which must not be a failure.
    async fn read_to_terminal(&mut self) -> Result<Vec<StreamChunk>, Failure> {
        let mut chunks = Vec::new();
        loop {
            match within(BOUND, "the next chunk", self.stream.recv()).await? {
                Some(StreamChunk::Finish { reason, .. }) if reason.failure().is_some() => {
                    return Err(format!("the turn failed: {reason:?}").into());
                }
                Some(chunk @ StreamChunk::Finish { .. }) => {
                    chunks.push(chunk);
                    return Ok(chunks);
                }
                Some(chunk) => chunks.push(chunk),
                None => return Err("the stream ended without a finish".into()),
            }
        }
    }

    /// Waits for the turn task to end, and hands back what a pooled process still needs:
    /// the fake's server task and the scratch root.
    async fn ended_after_keeping_the_fake(self) -> Result<impl Sized, Failure> {
        within(BOUND, "the turn's end", self.turn).await??;
        Ok((self._server, self._scratch))
    }

    /// Waits for the turn task to end, and says how long that took in virtual time.
    async fn ended_after(self) -> Result<(Duration, Arc<ExchangeRegistry>), Failure> {
        let started = Instant::now();
        within(BOUND, "the turn's end", self.turn).await??;
        Ok((started.elapsed(), self.registry))
    }
}

/// A turn paused for DSH's `slow` tool: the stream ended with finish(tool-calls).
async fn parked_turn() -> Result<Running, Failure> {
    let script = r#"
turns:
  - steps:
      - call: { tool: slow, args: {} }
      - text: "not reached: the turn was torn down"
"#;
    let mut running = start_turn(script, request("run the slow tool", slow_tool()))?;
    let parts = running.read_to_terminal().await?;
    assert!(
        parts
            .iter()
            .any(|chunk| matches!(chunk, StreamChunk::BlockEnd {
            block: ContentBlock::ToolCall(call), ..
        } if call.name == "slow")),
        "{parts:?}"
    );
    assert_eq!(
        parts.last(),
        Some(&StreamChunk::finish(FinishReason::ToolCalls))
    );
    Ok(running)
}

#[tokio::test(start_paused = true)]
async fn a_stalled_model_segment_fails_with_timeout_at_the_model_timeout() -> TestResult {
    let _watchdog = real_time_watchdog(WATCHDOG);
    let script = r#"
turns:
  - steps:
      - text: "Let me think"
      - wait_for_cancel: { timeout_ms: 86400000 }
"#;
    let started = Instant::now();
    let mut running = start_turn(script, request("think forever", vec![]))?;
    let code = failure_code(&mut running.stream).await?;
    let elapsed = started.elapsed();
    assert_eq!(code, "ACP_TIMEOUT");
    assert!(
        elapsed >= MODEL_TIMEOUT && elapsed < MODEL_TIMEOUT + TOOL_TIMEOUT,
        "failed after {elapsed:?}"
    );
    running.ended_after().await?;
    Ok(())
}

/// The model timeout bounds the whole segment, not each gap: chunks every half timeout
/// for three timeouts still fail the turn at about one timeout (a per-chunk inactivity
/// timeout would let all of them through and finish stop).
#[tokio::test(start_paused = true)]
async fn a_segment_streaming_past_the_model_timeout_fails_at_the_model_timeout() -> TestResult {
    let _watchdog = real_time_watchdog(WATCHDOG);
    let interval = MODEL_TIMEOUT / 2;
    // Seven chunks, six intervals apart: three model timeouts of steady streaming.
    let script = format!(
        "turns:\n  - steps:\n      - stream: {{ text: \"abcdefg\", interval_ms: {} }}\n",
        interval.as_millis()
    );
    let started = Instant::now();
    let mut running = start_turn(&script, request("stream slowly", vec![]))?;
    let code = failure_code(&mut running.stream).await?;
    let elapsed = started.elapsed();
    assert_eq!(code, "ACP_TIMEOUT");
    assert!(
        elapsed >= MODEL_TIMEOUT && elapsed < MODEL_TIMEOUT + interval,
        "failed after {elapsed:?}"
    );
    running.ended_after().await?;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_parked_call_unanswered_past_the_tool_timeout_ends_the_turn() -> TestResult {
    let _watchdog = real_time_watchdog(WATCHDOG);
    let running = parked_turn().await?;
    let (elapsed, registry) = running.ended_after().await?;
    assert!(
        elapsed >= TOOL_TIMEOUT && elapsed < MODEL_TIMEOUT,
        "the turn ended {elapsed:?} after parking"
    );
    assert!(!registry.withdraw(1), "the exchange is still parked");
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn an_abort_while_dsh_runs_the_tools_ends_the_turn() -> TestResult {
    let _watchdog = real_time_watchdog(WATCHDOG);
    let running = parked_turn().await?;
    running.abort.cancel();
    let (elapsed, registry) = running.ended_after().await?;
    assert!(
        elapsed < TOOL_TIMEOUT,
        "the turn waited {elapsed:?}: the abort went unheard between calls"
    );
    assert!(!registry.withdraw(1), "the exchange is still parked");
    Ok(())
}

/// A launch that must not happen: the turn has to reuse a pooled process.
fn no_launch(_: &LaunchLine, _: &Path) -> Result<ServerLink, AdapterError> {
    Err(AdapterError::ConnectionClosed(
        "a launch, although a pooled process was idle",
    ))
}

#[tokio::test(start_paused = true)]
async fn a_clean_turn_gives_its_process_back_and_the_next_turn_reuses_it() -> TestResult {
    let _watchdog = real_time_watchdog(WATCHDOG);
    let script = r#"
turns:
  - steps:
      - text: "hello"
"#;
    let mut first = start_turn(script, request("first", slow_tool()))?;
    first.read_to_terminal().await?;
    let (config, pool) = (first.config.clone(), first.pool.clone());
    // The fake keeps serving while the pool holds the connection.
    let _fake = first.ended_after_keeping_the_fake().await?;
    let second_request = request("second", slow_tool());
    let (spec, mut stream) = spec_for(&config, &pool, &second_request)?;
    let turn = AbortOnDropHandle::new(tokio::spawn(run_turn_with(spec, no_launch)));
    second_turn_finishes_stop(&mut stream, turn).await?;
    Ok(())
}

/// C34's lower bound: a pooled process idle for just under `idle_process_timeout` is
/// still kept and reused (no launch); idle just past it, it is gone (the next turn must
/// launch, and here it cannot). Virtual time: nothing sleeps.
#[tokio::test(start_paused = true)]
async fn a_pooled_process_is_kept_until_idle_process_timeout_and_not_past_it() -> TestResult {
    let _watchdog = real_time_watchdog(WATCHDOG);
    let script = r#"
turns:
  - steps:
      - text: "hello"
"#;
    let mut first = start_turn(script, request("first", slow_tool()))?;
    first.read_to_terminal().await?;
    let (config, pool) = (first.config.clone(), first.pool.clone());
    let _fake = first.ended_after_keeping_the_fake().await?;
    let margin = Duration::from_secs(1);
    let next = || -> Result<_, Failure> {
        let (spec, stream) = spec_for(&config, &pool, &request("next", slow_tool()))?;
        Ok((
            AbortOnDropHandle::new(tokio::spawn(run_turn_with(spec, no_launch))),
            stream,
        ))
    };
    tokio::time::advance(config.idle_process_timeout - margin).await;
    let (turn, mut stream) = next()?;
    second_turn_finishes_stop(&mut stream, turn).await?;
    tokio::time::advance(config.idle_process_timeout + margin).await;
    let (turn, mut stream) = next()?;
    let code = failure_code(&mut stream).await?;
    assert_eq!(code, "ACP_DISCONNECTED", "an expired process was reused");
    within(BOUND, "the turn's end", turn).await??;
    Ok(())
}

/// The no-tool lane's persistent client is reused while fresh, and disposed instead of
/// reused once it waited idle past `idle_process_timeout` (the next request launches).
#[tokio::test(start_paused = true)]
async fn the_lanes_client_is_not_reused_after_idle_process_timeout() -> TestResult {
    let _watchdog = real_time_watchdog(WATCHDOG);
    let script = r#"
turns:
  - steps:
      - text: "hello"
"#;
    let lane: NoToolLane = Arc::default();
    let mut first = start_turn_in(script, request("first", vec![]), Some(lane.clone()))?;
    first.read_to_terminal().await?;
    let (config, pool) = (first.config.clone(), first.pool.clone());
    let _fake = first.ended_after_keeping_the_fake().await?;
    assert!(lane.lock().await.is_some(), "the lane keeps its client");
    let next = |config: &Arc<AdapterConfig>| -> Result<_, Failure> {
        let (mut spec, stream) = spec_for(config, &pool, &request("next", vec![]))?;
        spec.lane = Some(LanePlace::take(&lane));
        Ok((
            AbortOnDropHandle::new(tokio::spawn(run_turn_with(spec, no_launch))),
            stream,
        ))
    };
    // Fresh: reused (no launch).
    let (turn, mut stream) = next(&config)?;
    second_turn_finishes_stop(&mut stream, turn).await?;
    // Idle past the timeout: disposed, and the next request must launch (here it cannot).
    tokio::time::advance(config.idle_process_timeout + Duration::from_secs(1)).await;
    let (turn, mut stream) = next(&config)?;
    let code = failure_code(&mut stream).await?;
    assert_eq!(code, "ACP_DISCONNECTED", "an expired client was reused");
    within(BOUND, "the turn's end", turn).await??;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_turn_disposes_its_process_instead_of_giving_it_back() -> TestResult {
    let _watchdog = real_time_watchdog(WATCHDOG);
    let script = r#"
turns:
  - steps:
      - wait_for_cancel: { timeout_ms: 86400000 }
"#;
    let mut first = start_turn(script, request("stall", slow_tool()))?;
    assert_eq!(failure_code(&mut first.stream).await?, "ACP_TIMEOUT");
    let (config, pool) = (first.config.clone(), first.pool.clone());
    let _fake = first.ended_after_keeping_the_fake().await?;
    let (spec, mut stream) = spec_for(&config, &pool, &request("again", slow_tool()))?;
    let turn = AbortOnDropHandle::new(tokio::spawn(run_turn_with(spec, no_launch)));
    let second = failure_code(&mut stream).await?;
    assert_eq!(
        second, "ACP_DISCONNECTED",
        "the second turn found a process to reuse"
    );
    within(BOUND, "the second turn's end", turn).await??;
    Ok(())
}

/// The server's stop reasons as DSH sees them: `end_turn` is `stop` only with content
/// (else `EMPTY_RESPONSE`), `max_tokens` is `max-tokens`, an unrequested `cancelled` is
/// `aborted`, and `refusal` and `max_turn_requests` fail with their own codes, never
/// `stop`.
#[test]
fn stop_reasons_map_to_their_own_outcomes() {
    let code = |stop, content| match stop_outcome(stop, content) {
        Ok(FinishReason::Aborted { failure }) => format!("aborted {}", failure.code),
        Ok(reason) => format!("{reason:?}"),
        Err(error) => error.to_llm_error().code.to_string(),
    };
    for (stop, content, expected) in [
        (StopReason::EndTurn, true, "Stop"),
        (StopReason::EndTurn, false, "EMPTY_RESPONSE"),
        (StopReason::MaxTokens, true, "MaxTokens"),
        (StopReason::MaxTokens, false, "MaxTokens"),
        (StopReason::Cancelled, true, "aborted ABORTED"),
        (StopReason::Refusal, true, "ACP_REFUSAL"),
        (StopReason::MaxTurnRequests, true, "ACP_TURN_LIMIT"),
    ] {
        assert_eq!(code(stop, content), expected, "{stop:?} content={content}");
    }
}

/// Every way a turn ends puts exactly one terminal chunk on DSH's stream (none when DSH
/// dropped it), and a stream DSH stopped reading does not hold the turn past the grace.
#[tokio::test(start_paused = true)]
async fn each_outcome_delivers_its_one_terminal_chunk() -> TestResult {
    let _watchdog = real_time_watchdog(WATCHDOG);
    let grace = Duration::from_secs(2);
    let cases: Vec<(Outcome, Option<&str>)> = vec![
        (
            Outcome::Finished(FinishReason::MaxTokens),
            Some("max-tokens"),
        ),
        (Outcome::Cancelled, Some("aborted ABORTED")),
        (Outcome::Superseded, Some("aborted ABORTED")),
        (
            Outcome::Failed(AdapterError::Timeout("the model segment")),
            Some("error ACP_TIMEOUT"),
        ),
        (
            Outcome::Failed(AdapterError::ToolTimeout),
            Some("error ACP_TOOL_TIMEOUT"),
        ),
        (Outcome::Disposed, Some("error ACP_DISPOSED")),
        (Outcome::CapReached, Some("max-tokens")),
        // Nothing is delivered: what a reader would get is the stream's own made-up
        // finish for a producer that sent none.
        (
            Outcome::DroppedByDsh,
            Some("error ACP_INTERNAL without a finish"),
        ),
    ];
    for (outcome, expected) in cases {
        let what = format!("{outcome:?}");
        let (sink, mut stream) = ChunkStream::channel();
        deliver_terminal(&sink, outcome, grace).await;
        drop(sink);
        let delivered = stream.recv().await.map(|chunk| match chunk {
            StreamChunk::Finish { reason, .. } => {
                let kind = serde_json::to_value(&reason)
                    .ok()
                    .and_then(|v| v["kind"].as_str().map(str::to_owned))
                    .unwrap_or_default();
                match reason.failure() {
                    Some(failure) if failure.message.contains("without a finish") => {
                        format!("{kind} {} without a finish", failure.code)
                    }
                    Some(failure) => format!("{kind} {}", failure.code),
                    None => kind,
                }
            }
            other => format!("not a finish: {other:?}"),
        });
        assert_eq!(delivered.as_deref(), expected, "{what}");
        assert!(stream.recv().await.is_none(), "{what}: more than one chunk");
    }
    // A DSH that holds the stream but never reads it: the turn goes on after the grace.
    let (sink, _unread) = ChunkStream::channel();
    let fill = StreamChunk::TextDelta {
        index: 0,
        text: "x".into(),
    };
    while tokio::time::timeout(grace, sink.send(fill.clone())).await == Ok(true) {}
    let delivering = deliver_terminal(&sink, Outcome::Cancelled, grace);
    within(BOUND, "delivering to a full stream", delivering).await?;
    Ok(())
}

/// A pooled process that dies between its checkout and its session (alive when checked
/// out, gone when `session/new` is sent) is disposed and replaced by a launched one: the
/// turn does not fail for it. The fake serving the first turn is stopped right before the
/// second turn starts, so the connection is still open at checkout and closes under
/// `session/new`; the log line proves the retry path (not the checkout's own check) ran.
#[tokio::test(start_paused = true)]
#[tracing_test::traced_test]
async fn a_process_that_dies_after_checkout_is_replaced() -> TestResult {
    let _watchdog = real_time_watchdog(WATCHDOG);
    let script = r#"
turns:
  - steps:
      - text: "hello"
"#;
    let mut first = start_turn(script, request("first", slow_tool()))?;
    first.read_to_terminal().await?;
    let (config, pool) = (first.config.clone(), first.pool.clone());
    within(BOUND, "the first turn's end", first.turn).await??;
    let (fake, _scratch) = (first._server, first._scratch);
    // A fresh fake for the launch the retry makes.
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_reads, server_writes) = tokio::io::split(server);
    let options = fake_antigravity::ServeOptions::new(fake_antigravity::parse_script(script)?);
    let _replacement = AbortOnDropHandle::new(tokio::spawn(fake_antigravity::serve(
        options,
        server_reads,
        server_writes,
    )));
    let (client_reads, client_writes) = tokio::io::split(client);
    let launch = move |_: &LaunchLine, _: &Path| {
        Ok(ServerLink::Streams(
            Box::new(client_writes),
            Box::new(client_reads),
        ))
    };
    let (spec, mut stream) = spec_for(&config, &pool, &request("second", slow_tool()))?;
    drop(fake);
    let turn = AbortOnDropHandle::new(tokio::spawn(run_turn_with(spec, launch)));
    second_turn_finishes_stop(&mut stream, turn).await?;
    assert!(logs_contain("a pooled process was gone; starting another"));
    Ok(())
}

/// DSH's `maxTokens` (3 tokens: 12 characters) cuts the generation at its budget: the
/// text that fits streams, its block closes, the finish is `max-tokens`, and the prompt
/// still running on the server is cancelled and its process not given back.
#[tokio::test(start_paused = true)]
async fn max_tokens_cuts_the_generation_and_cancels_the_prompt() -> TestResult {
    let _watchdog = real_time_watchdog(WATCHDOG);
    let script = r#"
turns:
  - steps:
      - text: "Hello there, "
      - text: "this is far too long"
      - wait_for_cancel: { timeout_ms: 86400000 }
"#;
    let mut capped = request("talk", vec![]);
    capped.max_tokens = Some(3);
    let mut running = start_turn(script, capped)?;
    let chunks = running.read_to_terminal().await?;
    let text: String = chunks
        .iter()
        .filter_map(|c| match c {
            StreamChunk::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Hello there,");
    assert!(
        chunks.contains(&StreamChunk::BlockEnd {
            index: 0,
            block: ContentBlock::text("Hello there,"),
        }),
        "{chunks:?}"
    );
    assert_eq!(
        chunks.last(),
        Some(&StreamChunk::finish(FinishReason::MaxTokens))
    );
    let (pool, config) = (running.pool.clone(), running.config.clone());
    let (elapsed, _) = running.ended_after().await?;
    assert!(
        elapsed < MODEL_TIMEOUT,
        "the capped prompt ran on for {elapsed:?}"
    );
    let line = ServerLauncher::new(&config).resolve().await?;
    assert!(
        pool.checkout(&PoolKey { line }).is_none(),
        "a process whose prompt was cut went back to the pool"
    );
    Ok(())
}

/// Reads the second turn's stream to its terminal part, which must be finish(stop), then
/// waits for the turn's task to end.
async fn second_turn_finishes_stop(
    stream: &mut ChunkStream,
    turn: AbortOnDropHandle<()>,
) -> TestResult {
    let terminal = loop {
        match within(BOUND, "the next chunk", stream.recv()).await? {
            Some(chunk @ StreamChunk::Finish { .. }) => break chunk,
            Some(_) => {}
            None => return Err("the stream ended without a finish".into()),
        }
    };
    assert_eq!(terminal, StreamChunk::finish(FinishReason::Stop));
    within(BOUND, "the second turn's end", turn).await??;
    Ok(())
}
