//! Server faults (`fake.faults`): what the fake does wrong to the frames it writes on
//! stdout, and when. A fault strikes at a frame index, counting every JSON-RPC frame the
//! fake writes from 0 (responses and notifications alike, in the order they leave); the
//! behaviour is in `faults/server_fault_writer.rs`. `dsh-sim chaos` adds one fault to an
//! ordinary scenario, so a fault is a scenario key like any other (claim B04).
//!
//! Faults the process switches already express are not repeated here: ignoring SIGTERM and
//! stdin's end is `process: { ignore_sigterm: true, linger: true }`, a stderr flood is
//! `process.stderr_flood_bytes`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One fault: `{at_frame: N, kind: KIND}` (with `ms` or `at_byte` where the kind takes one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerFault {
    /// The index of the frame it strikes at (0: the first frame the fake writes, the
    /// `initialize` answer). A kind that needs a frame of a certain shape (a response, a
    /// prompt's result) strikes at the first such frame at or after this index. A fake that
    /// writes fewer frames never strikes.
    pub at_frame: usize,
    /// What goes wrong.
    pub kind: ServerFaultKind,
    /// `stall_then_resume`: how long the stall lasts, in milliseconds (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
    /// `split_frame`: the byte offset the frame is split at (clamped to the frame's
    /// length; default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_byte: Option<usize>,
}

/// What a [`ServerFault`] does at its frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServerFaultKind {
    /// Exit at once with status 3, without writing the frame (a crash).
    Exit,
    /// Send itself SIGKILL instead of writing the frame.
    Sigkill,
    /// Write nothing more, ever (the process stays alive and keeps reading stdin).
    Stall,
    /// Write nothing for `ms` milliseconds, then go on with the frame.
    StallThenResume,
    /// Write a line that is not JSON (`garbage`) before the frame.
    GarbageLine,
    /// Write the first half of the frame and a newline instead of the frame (it is lost).
    TruncatedLine,
    /// Write the frame in two writes split at byte `at_byte`, 5 ms apart.
    SplitFrame,
    /// Close stdout (every copy of the pipe's write end) and go on running, discarding
    /// whatever is written afterwards.
    CloseStdout,
    /// Write the first response at or after the frame twice.
    ResponseTwice,
    /// Write a response to a request id the client never sent (`987654321`) after the
    /// frame.
    UnknownIdResponse,
    /// Write an `agent_message_chunk` notification for a session that does not exist
    /// before the frame.
    UnknownSessionNotification,
    /// After the first `session/prompt` result at or after the frame, write one more
    /// `agent_message_chunk` for that prompt's session (a chunk after the result).
    ChunkAfterResult,
}

impl ServerFaultKind {
    /// Every kind, in the order the documentation lists them.
    pub const ALL: [Self; 12] = [
        Self::Exit,
        Self::Sigkill,
        Self::Stall,
        Self::StallThenResume,
        Self::GarbageLine,
        Self::TruncatedLine,
        Self::SplitFrame,
        Self::CloseStdout,
        Self::ResponseTwice,
        Self::UnknownIdResponse,
        Self::UnknownSessionNotification,
        Self::ChunkAfterResult,
    ];

    /// Its spelling in a script (`exit`, `stall_then_resume`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::Exit => "exit",
            Self::Sigkill => "sigkill",
            Self::Stall => "stall",
            Self::StallThenResume => "stall_then_resume",
            Self::GarbageLine => "garbage_line",
            Self::TruncatedLine => "truncated_line",
            Self::SplitFrame => "split_frame",
            Self::CloseStdout => "close_stdout",
            Self::ResponseTwice => "response_twice",
            Self::UnknownIdResponse => "unknown_id_response",
            Self::UnknownSessionNotification => "unknown_session_notification",
            Self::ChunkAfterResult => "chunk_after_result",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_by_its_name() -> Result<(), serde_json::Error> {
        for kind in ServerFaultKind::ALL {
            let text = serde_json::to_string(&kind)?;
            assert_eq!(text, format!("\"{}\"", kind.name()));
            assert_eq!(serde_json::from_str::<ServerFaultKind>(&text)?, kind);
        }
        Ok(())
    }
}
