//! Resuming a parked turn: each result answers the parked call with its call id, in
//! whatever order DSH lists them; a result for no parked call, or a parked call left
//! without one, is invalid history.

use std::time::Duration;

use serde_json::json;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::TestResult;
use crate::contract::ContentBlockType as BlockKind;
use crate::contract::{ChunkStream, ContentBlock, TextBlock};
use crate::turn::exchange::ToolOutcome;

struct Parked {
    turn: TurnLoop,
    replies: HashMap<String, oneshot::Receiver<ToolReply>>,
    _stream: ChunkStream,
}

/// A loop streaming to the returned stream, with no server or bridge behind it.
fn streaming() -> (TurnLoop, ChunkStream) {
    let (_, calls) = mpsc::channel(1);
    let (sink, stream) = ChunkStream::channel();
    (TurnLoop::new(loop_parts(), calls, sink), stream)
}

fn loop_parts() -> TurnLoopParts {
    let (_, events) = mpsc::channel(1);
    let provider = CancellationToken::new();
    TurnLoopParts {
        events: crate::turn::event_queue::EventQueue::new(events),
        ends: TurnEnds {
            close: provider.child_token(),
            provider,
            abort: CancellationToken::new(),
        },
        registry: Arc::default(),
        id: 1,
        fingerprint: [0; 32],
        history: SegmentHistory::new(Vec::new()),
        timeout: Duration::from_secs(600),
        tool_timeout: Duration::from_secs(170),
        segment_started: Instant::now(),
        window: WindowReport::default(),
        max_tokens: None,
        confinement: None,
    }
}

/// A loop parked on calls of the tools `names`.
fn parked(names: &[&str]) -> Parked {
    let (mut turn, stream) = streaming();
    let mut parked = HashMap::new();
    let mut replies = HashMap::new();
    for name in names {
        let (call, reply) = ParkedCall::new((*name).to_owned(), json!({}));
        replies.insert((*name).to_owned(), reply);
        parked.insert(call.call_id.clone(), call);
    }
    turn.phase = Phase::Parked { calls: parked };
    Parked {
        turn,
        replies,
        _stream: stream,
    }
}

impl Parked {
    /// The call id the loop gave the call of `name`.
    fn id_of(&self, name: &str) -> Result<String, String> {
        let Phase::Parked { calls } = &self.turn.phase else {
            return Err("not parked".into());
        };
        calls
            .values()
            .find(|c| c.tool_name == name)
            .map(|c| c.call_id.clone())
            .ok_or_else(|| format!("no parked call of {name}"))
    }
}

fn result(call_id: &str, output: &str) -> ToolOutcome {
    ToolOutcome {
        call_id: call_id.to_owned(),
        text: output.to_owned(),
        is_error: false,
    }
}

fn continuation(results: Vec<ToolOutcome>) -> (Continuation, ChunkStream) {
    let (sink, stream) = ChunkStream::channel();
    let continuation = Continuation {
        results,
        sink,
        abort: CancellationToken::new(),
        history: SegmentHistory::new(Vec::new()),
        max_tokens: None,
    };
    (continuation, stream)
}

#[test]
fn results_answer_the_calls_with_their_ids_in_any_order() -> TestResult {
    // Five calls answered in reverse: a positional pairing matches all by chance 1 in 120.
    let names = ["a", "b", "c", "d", "e"];
    let mut parked = parked(&names);
    let mut results = Vec::new();
    for name in names.iter().rev() {
        results.push(result(&parked.id_of(name)?, &format!("answer {name}")));
    }
    let (resumed, _stream) = continuation(results);
    assert!(parked.turn.resume(resumed).is_ok());
    for name in names {
        let reply = parked
            .replies
            .get_mut(name)
            .ok_or("no reply channel")?
            .try_recv()?;
        assert_eq!(
            reply.text,
            format!("answer {name}"),
            "{name} got another call's result"
        );
    }
    assert!(matches!(parked.turn.phase, Phase::Streaming { .. }));
    Ok(())
}

#[test]
fn a_result_for_no_parked_call_is_invalid_history() -> TestResult {
    let mut parked = parked(&["first"]);
    let first = parked.id_of("first")?;
    let (resumed, _stream) = continuation(vec![result("call_foreign", "?"), result(&first, "ok")]);
    let outcome = parked.turn.resume(resumed);
    assert!(
        matches!(
            outcome,
            Err(Outcome::Failed(AdapterError::InvalidHistory(_)))
        ),
        "{outcome:?}"
    );
    Ok(())
}

#[test]
fn a_parked_call_without_a_result_is_missing_results() -> TestResult {
    let mut parked = parked(&["first", "second"]);
    let first = parked.id_of("first")?;
    let (resumed, _stream) = continuation(vec![result(&first, "ok")]);
    let outcome = parked.turn.resume(resumed);
    assert!(
        matches!(
            outcome,
            Err(Outcome::Failed(AdapterError::ToolResultsMissing(_)))
        ),
        "{outcome:?}"
    );
    // The unanswered call was dropped, which answers its HTTP request with an error.
    let left = parked.replies.get_mut("second").ok_or("no reply channel")?;
    assert!(left.try_recv().is_err());
    Ok(())
}

/// DSH's results start a fresh model segment: the deadline becomes one model timeout from
/// the resume (a paused clock, so exact), whatever it was while parked.
#[tokio::test(start_paused = true)]
async fn resuming_starts_a_fresh_model_segment() -> TestResult {
    let mut parked = parked(&["a"]);
    let id = parked.id_of("a")?;
    parked.turn.deadline = Instant::now();
    let (resumed, _stream) = continuation(vec![result(&id, "ok")]);
    parked
        .turn
        .resume(resumed)
        .map_err(|outcome| format!("{outcome:?}"))?;
    assert_eq!(
        parked.turn.deadline,
        Instant::now() + parked.turn.parts.timeout
    );
    Ok(())
}

/// The tool timeout firing after a continuation already claimed the exchange (it is on
/// its way; the registry no longer holds the turn) does not fail the turn: it waits for
/// the continuation one more model timeout from now.
#[tokio::test(start_paused = true)]
async fn a_deadline_after_the_claim_waits_one_more_model_timeout() -> TestResult {
    let mut parked = parked(&["a"]);
    parked.turn.deadline = Instant::now();
    let next = parked
        .turn
        .on_deadline()
        .map_err(|outcome| format!("{outcome:?}"))?;
    assert_eq!(next, Instant::now() + parked.turn.parts.timeout);
    Ok(())
}

/// DSH's abort landing after a server chunk became block chunks but before they were
/// sent (chaos seed 1796184962 runs 47 and 31): the chunks still reach DSH ahead of the
/// closing block-end, so the block-end is what DSH's deltas assembled, never text DSH
/// did not see, and no block is left open at the finish.
#[tokio::test]
async fn chunks_the_abort_overtook_reach_dsh_before_the_closing_block() -> TestResult {
    let (mut turn, mut stream) = streaming();
    turn.parts.ends.abort.cancel();
    let step = turn
        .on_event(ServerEvent::Chunk {
            kind: BlockKind::Text,
            text: "Bonjour".to_owned(),
        })
        .await;
    assert!(matches!(step, Err(Outcome::Cancelled)), "{step:?}");
    let (sink, _events, _settled) = turn
        .finish(&Outcome::Cancelled, Duration::from_secs(5))
        .await;
    drop(sink);
    let mut assembled = String::new();
    let mut ended = None;
    while let Some(chunk) = stream.recv().await {
        match chunk {
            StreamChunk::TextDelta { text, .. } => assembled.push_str(&text),
            StreamChunk::BlockEnd { block, .. } => ended = Some(block),
            _ => {}
        }
    }
    assert_eq!(
        assembled, "Bonjour",
        "the delta the abort overtook was lost"
    );
    let ended = ended.ok_or("no block-end: the block was left open")?;
    let expected = ContentBlock::Text(TextBlock {
        text: "Bonjour".into(),
    });
    assert_eq!(ended, expected, "the block-end differs from its deltas");
    Ok(())
}

/// A call whose HTTP request is already gone when the loop takes it (the server's MCP
/// client dropped the connection) never reaches DSH and does not park the turn; a live
/// call of the same round still does.
#[tokio::test]
async fn a_call_the_server_already_dropped_never_reaches_dsh() -> TestResult {
    let (mut turn, mut stream) = streaming();
    let (dropped, reply) = ParkedCall::new("gone".to_owned(), json!({}));
    drop(reply);
    turn.on_call(dropped)
        .await
        .map_err(|outcome| format!("{outcome:?}"))?;
    assert!(
        matches!(turn.phase, Phase::Streaming { .. }),
        "a round of abandoned calls parked the turn"
    );
    let (live, _reply) = ParkedCall::new("live".to_owned(), json!({}));
    turn.on_call(live)
        .await
        .map_err(|outcome| format!("{outcome:?}"))?;
    let Phase::Parked { calls } = &turn.phase else {
        return Err("the live call did not park the turn".into());
    };
    assert_eq!(calls.len(), 1);
    drop(turn);
    let mut names = Vec::new();
    while let Some(chunk) = stream.recv().await {
        if let StreamChunk::ToolCallDelta { name, .. } = chunk {
            names.extend(name);
        }
    }
    assert_eq!(names, ["live"], "DSH saw a call nobody could answer");
    Ok(())
}
