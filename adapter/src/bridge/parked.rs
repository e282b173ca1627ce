//! `ParkedCall`: a validated MCP `tools/call` waiting for DSH. It owns the one-shot reply
//! that answers the pending HTTP request; answering consumes it, so a call resolves
//! exactly once, and dropping it settles the request with an error result.

use serde_json::Value;
use tokio::sync::oneshot;

/// What DSH's tool result becomes on the MCP side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolReply {
    /// The result as text content.
    pub(crate) text: String,
    /// MCP `isError`.
    pub(crate) is_error: bool,
}

/// A tool call the server made through the bridge, parked until DSH answers it.
#[derive(Debug)]
pub(crate) struct ParkedCall {
    /// The fresh correlation id DSH sees.
    pub(crate) call_id: String,
    /// DSH's original tool name.
    pub(crate) tool_name: String,
    /// The validated arguments.
    pub(crate) arguments: Value,
    reply: oneshot::Sender<ToolReply>,
}

impl ParkedCall {
    /// A parked call and the receiver its HTTP request waits on.
    pub(crate) fn new(tool_name: String, arguments: Value) -> (Self, oneshot::Receiver<ToolReply>) {
        let (reply, receiver) = oneshot::channel();
        let call = Self {
            call_id: format!("call_{}", uuid::Uuid::new_v4().simple()),
            tool_name,
            arguments,
            reply,
        };
        (call, receiver)
    }

    /// Whether the server already gave up on the call (its HTTP request is gone): nobody
    /// can take its result any more.
    pub(crate) fn is_abandoned(&self) -> bool {
        self.reply.is_closed()
    }

    /// Answers the call. Returns `false` when the server already gave up on it.
    pub(crate) fn resolve(self, reply: ToolReply) -> bool {
        self.reply.send(reply).is_ok()
    }
}
