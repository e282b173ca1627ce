//! The `client_request` step: the server asks the client to act for it (`fs/read_text_file`,
//! `terminal/create`, …), as ACP lets an agent do on a client that advertised the
//! capability. The adapter advertises none, so it must refuse: a JSON-RPC error is what is
//! expected, a result is journaled as a failed expectation. The answer is logged either
//! way, and the turn goes on unless the prompt was cancelled meanwhile.

use agent_client_protocol::{Error, UntypedMessage};
use serde_json::Value;

use crate::script::ClientRequestStep;
use crate::turn::context::TurnContext;
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
    let sent = ctx
        .cx
        .send_request(UntypedMessage::new(&request.method, params)?);
    let (answer_tx, answer_rx) = tokio::sync::oneshot::channel();
    ctx.cx.spawn(async move {
        // A cancelled prompt stops listening; then nobody reads the answer.
        let _nobody_waits = answer_tx.send(sent.block_task().await);
        Ok(())
    })?;
    let answer = tokio::select! {
        biased;
        () = ctx.cancelled.cancelled() => return Ok(StepFlow::Cancelled),
        answer = answer_rx => answer,
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
