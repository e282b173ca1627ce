//! `TurnContext`: what every step of a running prompt turn shares (the server, the
//! connection, the session, the cancel token, the turn's index). Its own file, so the
//! steps and the prompt handler that runs them never import each other.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
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
