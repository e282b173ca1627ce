//! DSH's faults in the agent loop (`dsh.fault`, typed in `scenario/dsh_fault.rs`): the plan
//! counts the chat's chunks and says when to abort, drop the stream or dispose the
//! adapter; it bends the next request's history after a tool round; it holds a tool
//! round's results past the adapter's tool timeout; and it makes a title request beside a
//! parked tool turn. Each fault strikes once. The wait for the tool timeout is the
//! runner's ([`LateWait`]: it watches the fake's journal, with a bound).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use antigravity_acp::contract::{ChunkStream, LlmAdapter, Message, StreamChunk};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::scenario::DshFault;

/// The user text of the title request `title_while_parked` makes.
pub const PARKED_TITLE_TEXT: &str = "Title this chat";

/// How long past the tool timeout `late_result` waits, at most, for the timeout's effect.
pub const LATE_MARGIN: Duration = Duration::from_secs(5);

/// The runner's wait for the adapter's tool timeout to end a parked turn (bounded by the
/// tool timeout plus [`LATE_MARGIN`]).
pub type LateWait = Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

/// How the runner waits until the fake has journaled a number of `tools/call` answers
/// (a tool's `hold_until_fake_answers`), bounded by [`HOLD_BOUND`].
pub type AnswersWait = Box<dyn Fn(usize) -> BoxFuture<'static, ()> + Send + Sync>;

/// The longest a held tool waits for the fake's answers (past it, the tool runs: a
/// scenario whose expectation needed the answers then fails on its own checks).
pub const HOLD_BOUND: Duration = Duration::from_secs(5);

/// What DSH does at the struck chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkAction {
    /// Cancel the run's abort signal and read on.
    Abort,
    /// Drop the stream and end the run.
    Drop,
    /// Dispose the adapter and read on while it runs.
    Dispose,
}

/// One chat's fault and its progress.
#[derive(Default)]
pub struct FaultPlan {
    fault: Option<DshFault>,
    chunks: AtomicUsize,
    fired: AtomicBool,
    retry: AtomicBool,
    /// The round `history_reorder_results` reversed (its first message and length): DSH
    /// stores the round so, so every later request carries it in that order too.
    reordered: std::sync::OnceLock<(usize, usize)>,
    tool_timeout: Duration,
    late_wait: Option<LateWait>,
    /// Not a fault: the runner's journal watch for a held tool, set by
    /// [`FaultPlan::with_answers_wait`]; `held` once the chat's first hold ran.
    answers_wait: Option<AnswersWait>,
    held: AtomicBool,
}

impl std::fmt::Debug for FaultPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultPlan")
            .field("fault", &self.fault)
            .field("chunks", &self.chunks)
            .finish_non_exhaustive()
    }
}

impl FaultPlan {
    /// A plan for `fault`; `tool_timeout` is the adapter's, `late_wait` how the runner
    /// waits for it to strike (`None`: the bound itself).
    pub fn new(
        fault: Option<DshFault>,
        tool_timeout: Duration,
        late_wait: Option<LateWait>,
    ) -> Self {
        Self {
            fault,
            tool_timeout,
            late_wait,
            ..Self::default()
        }
    }

    /// The runner's watch for a held tool's answers (without one, a hold waits its bound).
    pub fn with_answers_wait(mut self, wait: Option<AnswersWait>) -> Self {
        self.answers_wait = wait;
        self
    }

    /// A tool's `hold_until_fake_answers`, at the chat's first held execution only:
    /// returns once the fake journaled `answers` `tools/call` answers, or at
    /// [`HOLD_BOUND`].
    pub async fn hold_for_answers(&self, answers: usize) {
        if self.held.swap(true, Ordering::SeqCst) {
            return;
        }
        match &self.answers_wait {
            Some(wait) => wait(answers).await,
            None => tokio::time::sleep(HOLD_BOUND).await,
        }
    }

    /// Marks the fault fired; `true` the first time only.
    fn fire(&self) -> bool {
        !self.fired.swap(true, Ordering::SeqCst)
    }

    /// Why the run proves nothing about its fault, if the planned fault never struck (a
    /// chunk index past the chat's last chunk, a round too small to bend): a scenario
    /// whose fault does not strike would pass without testing it.
    pub fn never_struck(&self) -> Option<String> {
        let fault = self.fault?;
        (!self.fired.load(Ordering::SeqCst))
            .then(|| format!("the planned dsh.fault {fault:?} never struck during the chat"))
    }

    /// Whether the fault ends a turn by itself, so the runner gives the adapter a moment
    /// to close the turn's bridge after the run: a dropped stream, or an abort (as after
    /// an abort on tool calls, the aborted turn's process is disposed once DSH holds the
    /// terminal chunk; chaos seed 1796184962 run 379 found the bridge open at that instant).
    pub fn drops_streams(&self) -> bool {
        matches!(
            self.fault,
            Some(DshFault::DropStream { .. } | DshFault::Abort { .. })
        )
    }

    /// Counts a chunk DSH received; what to do now, if this is the struck one.
    pub fn on_chunk(&self) -> Option<ChunkAction> {
        let index = self.chunks.fetch_add(1, Ordering::SeqCst);
        let (at, action) = match self.fault? {
            DshFault::Abort { at_chunk } => (at_chunk, ChunkAction::Abort),
            DshFault::DropStream { at_chunk } => (at_chunk, ChunkAction::Drop),
            DshFault::Dispose { at_chunk } => (at_chunk, ChunkAction::Dispose),
            _ => return None,
        };
        (index == at && self.fire()).then_some(action)
    }

    /// The history DSH sends: `history` itself, or, once, after a tool round, that
    /// history with the round's results bent as a `history_*` fault says (a dropped or
    /// repeated result is sent once and then retried whole; a reordered round stays
    /// reordered in every later request, as DSH would have stored it so).
    pub fn shape_history(&self, mut history: Vec<Message>) -> Vec<Message> {
        let results = history
            .iter()
            .rev()
            .take_while(|m| !m.tool_results().is_empty())
            .count();
        let first = history.len() - results;
        if let Some(&(at, len)) = self.reordered.get() {
            if let Some(round) = history.get_mut(at..at + len) {
                round.reverse();
            }
            return history;
        }
        let applies = match self.fault {
            Some(DshFault::HistoryDropResult | DshFault::HistoryRepeatResult) => results >= 1,
            Some(DshFault::HistoryReorderResults) => results >= 2,
            _ => false,
        };
        if !applies || !self.fire() {
            return history;
        }
        match self.fault {
            Some(DshFault::HistoryDropResult) => {
                history.pop();
                self.retry.store(true, Ordering::SeqCst);
            }
            Some(DshFault::HistoryRepeatResult) => {
                if let Some(last) = history.last().cloned() {
                    let mut again = last;
                    again.id = again.id.map(|id| format!("{id}-again"));
                    history.push(again);
                }
                self.retry.store(true, Ordering::SeqCst);
            }
            _ => {
                history[first..].reverse();
                // Set once: the first reordered round is the one every later request
                // repeats (a second set finds it taken, which is what is wanted).
                self.reordered.set((first, results)).ok();
            }
        }
        history
    }

    /// Whether DSH sends the request again after the adapter refused a bent history
    /// (once).
    pub fn retry_refused(&self) -> bool {
        self.retry.swap(false, Ordering::SeqCst)
    }

    /// `late_result`, at the first tool round: returns once the adapter's tool timeout
    /// has ended the parked turn (the runner's [`LateWait`]), or, with nothing to watch,
    /// once the tool timeout plus [`LATE_MARGIN`] has passed.
    pub async fn hold_results(&self) {
        if self.fault != Some(DshFault::LateResult) || !self.fire() {
            return;
        }
        match &self.late_wait {
            Some(wait) => wait().await,
            // Nothing to watch (a real server): the bound is past the timeout.
            None => tokio::time::sleep(self.tool_timeout + LATE_MARGIN).await,
        }
    }

    /// `title_while_parked`, at the first tool round: a title request while the turn is
    /// parked; why it failed, if it did.
    pub async fn title_beside_parked(
        &self,
        adapter: &dyn LlmAdapter,
        model: &str,
        session_id: &str,
        abort: CancellationToken,
    ) -> Result<(), String> {
        if self.fault != Some(DshFault::TitleWhileParked) || !self.fire() {
            return Ok(());
        }
        let (title, failed) =
            super::side_requests::title(adapter, model, PARKED_TITLE_TEXT, session_id, abort).await;
        if failed {
            return Err(format!(
                "the title request beside the parked tool turn failed: {title}"
            ));
        }
        Ok(())
    }
}

/// The next chunk of `stream`, driving a disposal that DSH started meanwhile.
pub async fn next_chunk(
    stream: &mut ChunkStream,
    disposing: &mut Option<BoxFuture<'_, ()>>,
) -> Option<StreamChunk> {
    loop {
        let Some(dispose) = disposing.as_mut() else {
            return stream.recv().await;
        };
        tokio::select! {
            item = stream.recv() => return item,
            () = dispose => *disposing = None,
        }
    }
}

#[cfg(test)]
mod tests {
    use antigravity_acp::contract::Message;
    use serde_json::json;

    use super::*;
    use crate::host::tools::result_message;

    fn round() -> Vec<Message> {
        vec![
            Message::user("hi"),
            result_message("a", &json!("A"), false),
            result_message("b", &json!("B"), false),
        ]
    }

    fn result_ids(history: &[Message]) -> Vec<String> {
        history
            .iter()
            .flat_map(|m| m.tool_results())
            .map(|r| r.call_id.to_owned())
            .collect()
    }

    #[test]
    fn history_faults_bend_the_first_request_after_a_round_once() {
        let plan = |fault| FaultPlan::new(Some(fault), Duration::ZERO, None);
        let drop = plan(DshFault::HistoryDropResult);
        assert_eq!(result_ids(&drop.shape_history(round())), ["a"]);
        assert!(drop.retry_refused());
        assert!(!drop.retry_refused());
        assert_eq!(result_ids(&drop.shape_history(round())), ["a", "b"]);
        let repeat = plan(DshFault::HistoryRepeatResult);
        assert_eq!(result_ids(&repeat.shape_history(round())), ["a", "b", "b"]);
        let reorder = plan(DshFault::HistoryReorderResults);
        assert_eq!(result_ids(&reorder.shape_history(round())), ["b", "a"]);
        assert!(!reorder.retry_refused());
        // No tool round yet: nothing is bent and the fault waits.
        let early = plan(DshFault::HistoryDropResult);
        assert_eq!(early.shape_history(vec![Message::user("hi")]).len(), 1);
        assert_eq!(result_ids(&early.shape_history(round())), ["a"]);
    }

    #[test]
    fn chunk_faults_strike_their_chunk_only() {
        let plan = FaultPlan::new(
            Some(DshFault::DropStream { at_chunk: 2 }),
            Duration::ZERO,
            None,
        );
        let actions: Vec<_> = (0..5).map(|_| plan.on_chunk()).collect();
        assert_eq!(actions, [None, None, Some(ChunkAction::Drop), None, None]);
        assert!(FaultPlan::default().on_chunk().is_none());
    }
}
