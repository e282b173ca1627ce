//! The `stream` step: text sent as many `agent_message_chunk` deltas, optionally paced
//! at an interval (a segment that outlasts a timeout while no gap between two chunks
//! does).

use std::time::Duration;

use agent_client_protocol::Error;

use crate::acp::session_updates::{message_chunk, send_update};
use crate::script::StreamStep;
use crate::turn::context::TurnContext;
use crate::turn::server_owned_steps::StepFlow;

/// Streams `stream.text` in pieces of `code_points`, pausing `interval_ms` before every
/// piece but the first; a `session/cancel` during a pause ends the step (the text sent so
/// far is the agent's).
pub async fn run_stream(
    ctx: &TurnContext<'_>,
    stream: &StreamStep,
    agent_text: &mut String,
) -> Result<StepFlow, Error> {
    let interval = Duration::from_millis(stream.interval_ms);
    let chars: Vec<char> = stream.text.chars().collect();
    for (index, piece) in chars.chunks(stream.code_points.max(1)).enumerate() {
        if index > 0 && !interval.is_zero() {
            tokio::select! {
                biased;
                () = ctx.cancelled.cancelled() => return Ok(StepFlow::Cancelled),
                () = tokio::time::sleep(interval) => {}
            }
        }
        let piece: String = piece.iter().collect();
        send_update(ctx.cx, ctx.session_id, message_chunk(&piece))?;
        agent_text.push_str(&piece);
    }
    Ok(StepFlow::GoesOn)
}
