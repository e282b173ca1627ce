//! The `parallel` step: several host tool calls at once, each the 1.3.0 way of `call`.
//! Every call is announced first; then all permission requests are outstanding together;
//! then every allowed call's MCP `tools/call` is started before any is awaited, so the
//! host sees them all in flight at the same time.

use agent_client_protocol::Error;
use futures::future::join_all;

use crate::script::CallStep;
use crate::turn::context::TurnContext;
use crate::turn::tool_call_step::{
    Announce, AnnouncedCall, CallOutcome, Permit, announce, execute, permit,
};

/// How a `parallel` step ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ParallelEnd {
    /// Every call was answered allow (or could not run): the outcomes, in script order.
    Ran(Vec<CallOutcome>),
    /// At least one permission was denied or cancelled: the allowed calls still ran, and
    /// the turn ends with `end_turn`. How the first rejected one was answered.
    Denied(String),
    /// `session/cancel` arrived: the turn ends with `cancelled`.
    Cancelled,
}

/// One call of the group on its way through the stages.
enum Slot {
    Ready(Box<AnnouncedCall>),
    NotRun(String),
}

/// Runs one `parallel` step (`step` is its index in the turn).
pub async fn run_parallel(
    ctx: &TurnContext<'_>,
    step: usize,
    calls: &[CallStep],
) -> Result<ParallelEnd, Error> {
    let mut slots = Vec::with_capacity(calls.len());
    for call in calls {
        slots.push(match announce(ctx, step, call).await? {
            Announce::Announced(announced) => Slot::Ready(announced),
            Announce::NotRun(message) => Slot::NotRun(message),
            Announce::Cancelled => return Ok(ParallelEnd::Cancelled),
        });
    }

    let permits = join_all(slots.iter().map(|slot| async move {
        match slot {
            Slot::Ready(announced) => permit(ctx, announced).await,
            Slot::NotRun(_) => Ok(Permit::Allowed),
        }
    }))
    .await
    .into_iter()
    .collect::<Result<Vec<_>, Error>>()?;
    if permits.contains(&Permit::Abandoned) {
        return Ok(ParallelEnd::Cancelled);
    }
    let denied = permits.iter().find_map(|p| match p {
        Permit::Rejected(answer) => Some(answer.clone()),
        Permit::Allowed | Permit::Abandoned => None,
    });

    let runs = join_all(slots.iter().zip(&permits).map(|(slot, permit)| async move {
        match (slot, permit) {
            (Slot::Ready(announced), Permit::Allowed) => execute(ctx, announced).await,
            (Slot::Ready(_), _) => Ok(Some(CallOutcome::NotRun(
                "its permission was not granted".into(),
            ))),
            (Slot::NotRun(message), _) => Ok(Some(CallOutcome::NotRun(message.clone()))),
        }
    }))
    .await;
    let mut outcomes = Vec::with_capacity(runs.len());
    for run in runs {
        match run? {
            Some(outcome) => outcomes.push(outcome),
            None => return Ok(ParallelEnd::Cancelled),
        }
    }
    Ok(match denied {
        Some(answer) => ParallelEnd::Denied(answer),
        None => ParallelEnd::Ran(outcomes),
    })
}
