//! The `client_request` step: the server asks the client to act for it (`fs/read_text_file`,
//! `terminal/create`, …), as ACP lets an agent do on a client that advertised the
//! capability. The adapter advertises none, so it must refuse: a JSON-RPC error is what is
//! expected, a result is journaled as a failed expectation. The answer is logged either
//! way, and the turn goes on unless the prompt was cancelled meanwhile.

use agent_client_protocol::Error;
use serde_json::Value;

use crate::script::ClientRequestStep;
use crate::turn::context::{ClientAnswer, TurnContext};
use crate::turn::server_owned_steps::StepFlow;

/// Runs a `client_request` step at `index` of the turn.
pub async fn run_client_request(
    ctx: &TurnContext<'_>,
    index: usize,
    request: &ClientRequestStep,
) -> Result<StepFlow, Error> {
    let mut params = request.params.clone();
    if let Value::Object(map) = &mut params {
        map.insert("sessionId".into(), Value::from(ctx.session_id));
    }
    let answer = match ctx.ask_client(&request.method, params).await? {
        ClientAnswer::Cancelled => return Ok(StepFlow::Cancelled),
        ClientAnswer::Answered(answer) => Ok(answer),
        ClientAnswer::ConnectionClosed => Err(()),
    };
    match answer {
        Ok(Err(error)) => ctx.agent.log.info(
            "client.py:41",
            &format!(
                "the client refused {} with JSON-RPC error {}",
                request.method,
                error.code.value()
            ),
        ),
        Ok(Ok(_result)) => ctx.agent.expectation_failed(
            ctx.turn,
            index,
            format!(
                "the client answered {} with a result; it must refuse it (no fs, no terminal)",
                request.method
            ),
        ),
        Err(_) => ctx.agent.expectation_failed(
            ctx.turn,
            index,
            format!(
                "the connection closed before {} was answered",
                request.method
            ),
        ),
    }
    Ok(StepFlow::GoesOn)
}
