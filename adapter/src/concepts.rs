//! Concepts: the words the adapter's code uses, in the order a newcomer meets them. Read
//! this page, then `turn.rs` (start and teardown) and `turn/driver.rs` (the loop).
//! `docs/design.md` in the repository holds the design and its numbered claims.
//!
//! # Turn
//!
//! A **turn** is one server conversation: one server process it holds exclusively, one
//! fresh ACP session with its own empty `cwd`, one `session/prompt`, and (when DSH offers
//! tools) one private MCP **bridge** with a fresh bearer token. A fresh generate from DSH
//! starts a turn; the provider spawns it on its task tracker and awaits it on disposal. A
//! turn owns everything it starts and tears all of it down however it ends.
//!
//! # Pool, lane, discovery
//!
//! Processes outlive turns. The provider's **pool** keeps healthy idle processes, keyed
//! by their launch line; a tool turn **checks one out** (or launches one) and, after a
//! clean end only, **gives it back**. Requests without tools take the **no-tool lane**:
//! one at a time, no active-turn slot, on an idle pooled process or the lane's persistent
//! client. **Discovery** reads the server's model catalogue from one session on a new
//! process, which then joins the pool with that session **unclaimed**: the first request
//! without tools may use it once.
//!
//! # Segment
//!
//! A **segment** is one stretch of the turn during which DSH holds a stream and the model
//! is working: from the turn's start (start-up included) or from a continuation, until
//! the prompt finishes or the model calls tools. The model timeout bounds each segment on
//! its own; it is paused while DSH runs tools.
//!
//! # Phases of the loop
//!
//! The turn's loop (`TurnLoop`) is in one of two phases, an enum, so an impossible mix
//! (a stream and parked calls at once) cannot be written:
//!
//! - **Streaming** `{ sink, blocks }`: DSH holds `sink`. Server chunks become blocks with
//!   stable indexes. A bridge `tools/call` (a `ParkedCall`) becomes a DSH tool call part;
//!   calls that already arrived join the same round.
//! - **Parked** `{ calls by id }`: the stream ended with `finish(tool-calls)`. The HTTP
//!   requests of the calls stay pending, and so does the ACP prompt. The tool timeout
//!   bounds how long the loop waits for DSH.
//!
//! Whatever the phase, the same outside signals end the turn, checked in one place
//! (`TurnEnds::or_end`) in one order: disposal, supersession, DSH's abort, and (while
//! streaming) DSH dropping its stream.
//!
//! # Exchange, claim, continuation
//!
//! Parking registers an **exchange** in the provider's `ExchangeRegistry`: the issued call
//! ids, the history the segment was generated from, and a fingerprint of model, system
//! prompt and tool catalog. DSH's next generate **claims** it when its history is that
//! history plus the assistant's calls and exactly one result per call, with the same
//! fingerprint. The claim becomes a **continuation**: the results, DSH's new stream and
//! its new abort signal, delivered to the parked loop. The loop answers each parked call
//! with the result carrying its call id (a mismatch is `invalid_history`) and streams to
//! the new stream: the next segment. Anything else (a new user message, changed tools, a
//! title request) starts a fresh turn, and supersedes an exchange it contradicts.
//!
//! ```text
//!               generate (fresh)
//!                     |
//!                     v
//!   start: bridge, process (checked out, or launched + initialize), session/new, prompt
//!                     |
//!                     v
//!            +-----------------+   bridge call(s): tool-call parts,     +---------------+
//!            |    Streaming    | ------ finish(tool-calls), park -----> |    Parked     |
//!            | { sink, blocks }|                                        | {calls by id} |
//!            |                 | <----- continuation: results by id, -- |               |
//!            +-----------------+        new stream, new abort           +---------------+
//!                     |                                                        |
//!     prompt done, failure, model timeout,             abort, tool timeout, disposal,
//!     abort, disposal, DSH drops the stream            supersession
//!                     |                                                        |
//!                     +---------------------------+----------------------------+
//!                                                 v
//!          finish -> settle -> (clean: give back) -> terminal part -> release
//! ```
//!
//! # Teardown: finish, settle, release
//!
//! However the turn ends, teardown runs in this order (`run_turn`):
//!
//! 1. **finish** the loop: stop taking continuations (one that claimed the exchange just
//!    as it ended still gets the terminal part), drop the parked calls, close an open
//!    block.
//! 2. **settle** the conversation: if the prompt still runs, send `session/cancel` and
//!    give the server the shutdown grace to answer; then close the bridge, which answers
//!    every parked HTTP request with an error result and releases the port.
//! 3. Withdraw the exchange. After a clean end (the prompt finished, nothing parked),
//!    **give back** the process: detach the turn's handlers, close the session if the
//!    server advertises `session/close`, remove the session's `cwd`, return the process
//!    to the pool (or the lane), before DSH learns the outcome, so its next turn finds it.
//! 4. Deliver the single **terminal part** to DSH (finish or error), within the grace.
//! 5. **release** the rest after any other end: remove the session's `cwd`, close the ACP
//!    connection (the server's stdin), end the process group (grace, then kill), remove
//!    the process's scratch root, stop the prompt task. Only then are the turn's
//!    active-turn slot and the no-tool lane freed.
//!
//! DSH thus learns the outcome once nothing can still act on its behalf, and the server's
//! own exit time never delays DSH. Every task a turn starts (the bridge's serve task, the
//! ACP connection's driver, the prompt task) is held by a handle that aborts it on drop,
//! so even a turn that panics leaves no task, port or process behind.
