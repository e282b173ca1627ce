//! `TurnContext`: what every step of a running prompt turn shares (the server, the
//! connection, the session, the cancel token, the turn's index). Its own file, so the
//! steps and the prompt handler that runs them never import each other.

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Client, Error, UntypedMessage};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::state::fake_agent::FakeAgent;

/// What a running turn needs.
pub struct TurnContext<'a> {
    /// The server.
    pub agent: &'a FakeAgent,
    /// The connection to the client.
    pub cx: &'a ConnectionTo<Client>,
    /// The prompt's session.
    pub session_id: &'a str,
    /// Cancelled by `session/cancel`.
    pub cancelled: &'a CancellationToken,
    /// The turn's index in the script.
    pub turn: usize,
}

/// How a request the server sent to the client ended, seen from the turn.
pub enum ClientAnswer {
    /// The client answered: its result or its JSON-RPC error.
    Answered(Result<Value, Error>),
    /// `session/cancel` came first; nobody waits for the answer any more.
    Cancelled,
    /// The connection closed before an answer.
    ConnectionClosed,
}

impl TurnContext<'_> {
    /// Sends `method` with `params` to the client and waits for the answer or for
    /// `session/cancel`. The request is awaited by a task of its own, so a cancelled
    /// prompt simply stops listening (no `$/cancel_request`), and several requests may be
    /// outstanding at once.
    pub async fn ask_client(&self, method: &str, params: Value) -> Result<ClientAnswer, Error> {
        let sent = self.cx.send_request(UntypedMessage::new(method, params)?);
        let (answer_tx, answer_rx) = tokio::sync::oneshot::channel();
        self.cx.spawn(async move {
            // A cancelled prompt stops listening; then nobody reads the answer.
            let _nobody_waits = answer_tx.send(sent.block_task().await);
            Ok(())
        })?;
        let answer = tokio::select! {
            biased;
            () = self.cancelled.cancelled() => return Ok(ClientAnswer::Cancelled),
            answer = answer_rx => answer,
        };
        Ok(match answer {
            Ok(answer) => ClientAnswer::Answered(answer),
            Err(_) => ClientAnswer::ConnectionClosed,
        })
    }
}
