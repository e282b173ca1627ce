//! How a turn ends: [`Outcome`], and [`TurnEnds`], the signals that end a turn from
//! outside whatever it is doing (disposal, supersession, DSH's abort, DSH dropping its
//! stream). [`TurnEnds::or_end`] is the one place that races a piece of work against them,
//! always in the same order. And what DSH is told when a turn ends: [`stop_outcome`] (the
//! server's stop reason as DSH's finish) and [`aborted`].

use tokio_util::sync::CancellationToken;

use agent_client_protocol::v1::schema::StopReason;

use crate::contract::{ChunkSender, FinishReason, LlmError, LlmErrorCode};
use crate::error::AdapterError;

/// How a turn ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The prompt finished.
    Finished(FinishReason),
    /// Something failed.
    Failed(AdapterError),
    /// DSH's abort signal fired.
    Cancelled,
    /// A newer generate replaced the exchange (changed context or tools).
    Superseded,
    /// The provider was disposed.
    Disposed,
    /// The generation reached DSH's `maxTokens`: its output was cut and the prompt is
    /// cancelled (the finish is `max-tokens`).
    CapReached,
    /// DSH dropped the stream (an early return).
    DroppedByDsh,
}

/// The outside signals that end a turn.
#[derive(Debug, Clone)]
pub(crate) struct TurnEnds {
    /// The provider's token: cancelled on disposal.
    pub(crate) provider: CancellationToken,
    /// The turn's own token (a child of `provider`): cancelled when a newer generate
    /// supersedes the parked exchange. The bridge closes with it.
    pub(crate) close: CancellationToken,
    /// The abort signal of the generate DSH is currently waiting on; a continuation
    /// replaces it.
    pub(crate) abort: CancellationToken,
}

impl TurnEnds {
    /// Runs `work` unless the turn ends first. The checks are biased, in this order:
    /// disposal, supersession, DSH's abort, then (when DSH holds `stream`) DSH dropping
    /// it; `work` is polled last, so an ending that is already signalled always wins.
    pub(crate) async fn or_end<T>(
        &self,
        stream: Option<&ChunkSender>,
        work: impl Future<Output = T>,
    ) -> Result<T, Outcome> {
        let dropped = async {
            match stream {
                Some(stream) => stream.closed().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = self.provider.cancelled() => Err(Outcome::Disposed),
            () = self.close.cancelled() => Err(Outcome::Superseded),
            () = self.abort.cancelled() => Err(Outcome::Cancelled),
            () = dropped => Err(Outcome::DroppedByDsh),
            done = work => Ok(done),
        }
    }
}

/// Maps the server's stop reason to how the prompt ended for DSH: `end_turn` is `stop`
/// (an empty response when this generation streamed no block), `max_tokens` is
/// `max-tokens`, a `cancelled` DSH did not ask for is `aborted`; `refusal`,
/// `max_turn_requests` and any other reason fail with their own codes, never `stop`.
pub(crate) fn stop_outcome(
    stop: StopReason,
    has_content: bool,
) -> Result<FinishReason, AdapterError> {
    match stop {
        StopReason::EndTurn if has_content => Ok(FinishReason::Stop),
        StopReason::EndTurn => Err(AdapterError::EmptyResponse),
        StopReason::MaxTokens => Ok(FinishReason::MaxTokens),
        StopReason::Cancelled => Ok(aborted("the server cancelled the prompt")),
        StopReason::Refusal => Err(AdapterError::Refusal),
        StopReason::MaxTurnRequests => Err(AdapterError::TurnLimit),
        _ => Err(AdapterError::UnknownStop),
    }
}

/// An `aborted` finish with code `ABORTED`.
pub(crate) fn aborted(message: &str) -> FinishReason {
    FinishReason::Aborted {
        failure: LlmError::new(LlmErrorCode::Aborted, message).to_failure(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::ChunkStream;

    fn ends() -> TurnEnds {
        let provider = CancellationToken::new();
        TurnEnds {
            close: provider.child_token(),
            provider,
            abort: CancellationToken::new(),
        }
    }

    #[tokio::test]
    async fn work_runs_when_nothing_ends_the_turn() {
        let done = ends().or_end(None, async { 7 }).await;
        assert!(matches!(done, Ok(7)));
    }

    #[tokio::test]
    async fn disposal_wins_over_every_other_ending() {
        let ends = ends();
        ends.abort.cancel();
        ends.close.cancel();
        ends.provider.cancel();
        let (sink, stream) = ChunkStream::channel();
        drop(stream);
        let ended = ends.or_end(Some(&sink), async {}).await;
        assert!(matches!(ended, Err(Outcome::Disposed)), "{ended:?}");
    }

    #[tokio::test]
    async fn a_signalled_abort_wins_over_ready_work() {
        let ends = ends();
        ends.abort.cancel();
        let ended = ends.or_end(None, async {}).await;
        assert!(matches!(ended, Err(Outcome::Cancelled)), "{ended:?}");
    }

    #[tokio::test]
    async fn a_dropped_stream_ends_the_turn_only_while_dsh_holds_one() {
        let ends = ends();
        let (sink, stream) = ChunkStream::channel();
        drop(stream);
        let ended = ends.or_end(Some(&sink), std::future::pending::<()>()).await;
        assert!(matches!(ended, Err(Outcome::DroppedByDsh)), "{ended:?}");
        let done = ends.or_end(None, async { 1 }).await;
        assert!(matches!(done, Ok(1)));
    }
}
