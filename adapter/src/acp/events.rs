//! `ServerEvent`s: what a turn learns from the server, and `UpdateTracker`, which maps ACP
//! session updates into them. Bridge tool calls announced by `tool_call` updates are
//! tracked and ignored (only real MCP requests create DSH calls); a tool call of the
//! server's own that starts running is reported as a native action.

use std::collections::HashSet;

use agent_client_protocol::v1::schema::{ContentBlock, SessionUpdate, StopReason, ToolCallStatus};

use super::permission::is_bridge_call;
use crate::bridge::BridgeIdentity;
use crate::contract::ContentBlockType as BlockKind;
use crate::error::AdapterError;

/// Something the server did that the turn must act on.
#[derive(Debug)]
pub(crate) enum ServerEvent {
    /// Text or reasoning, as a delta.
    Chunk {
        /// Which block kind.
        kind: BlockKind,
        /// The delta.
        text: String,
    },
    /// Context occupancy (not billing): only the window's size is kept.
    Usage {
        /// The context window.
        size: u64,
    },
    /// A server-owned (non-bridge) tool started running. Its title is the server's text
    /// and is not kept.
    NativeAction,
    /// The `session/prompt` request finished.
    PromptDone(Result<StopReason, AdapterError>),
}

/// Maps session updates to events, remembering which tool calls are the bridge's.
#[derive(Debug)]
pub(crate) struct UpdateTracker {
    bridge: Option<BridgeIdentity>,
    bridge_calls: HashSet<String>,
}

fn is_running(status: Option<ToolCallStatus>) -> bool {
    matches!(
        status,
        Some(ToolCallStatus::InProgress | ToolCallStatus::Completed)
    )
}

impl UpdateTracker {
    pub(crate) fn new(bridge: Option<BridgeIdentity>) -> Self {
        Self {
            bridge,
            bridge_calls: HashSet::new(),
        }
    }

    /// The event an update means, if any.
    pub(crate) fn map(&mut self, update: SessionUpdate) -> Option<ServerEvent> {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => text_event(BlockKind::Text, chunk.content),
            SessionUpdate::AgentThoughtChunk(chunk) => {
                text_event(BlockKind::Reasoning, chunk.content)
            }
            SessionUpdate::UsageUpdate(usage) => Some(ServerEvent::Usage { size: usage.size }),
            SessionUpdate::ToolCall(call) => {
                let id = call.tool_call_id.to_string();
                if is_bridge_call(call.meta.as_ref(), self.bridge.as_ref()) {
                    self.bridge_calls.insert(id);
                    None
                } else if is_running(Some(call.status)) {
                    Some(ServerEvent::NativeAction)
                } else {
                    None
                }
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let id = update.tool_call_id.to_string();
                if self.bridge_calls.contains(&id)
                    || is_bridge_call(update.meta.as_ref(), self.bridge.as_ref())
                {
                    None
                } else if is_running(update.fields.status) {
                    Some(ServerEvent::NativeAction)
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}

fn text_event(kind: BlockKind, content: ContentBlock) -> Option<ServerEvent> {
    match content {
        // An empty chunk carries nothing.
        ContentBlock::Text(text) => (!text.text.is_empty()).then_some(ServerEvent::Chunk {
            kind,
            text: text.text,
        }),
        _ => {
            tracing::debug!("ignored a non-text message chunk");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn bridge() -> BridgeIdentity {
        BridgeIdentity {
            server: "dsh".into(),
            tools: ["echo_0123456789ab".to_owned()].into(),
        }
    }

    fn update(value: serde_json::Value) -> Result<SessionUpdate, serde_json::Error> {
        serde_json::from_value(value)
    }

    #[test]
    fn bridge_tool_updates_are_tracked_not_executed() -> crate::TestResult {
        let mut tracker = UpdateTracker::new(Some(bridge()));
        let announced = update(json!({"sessionUpdate": "tool_call", "toolCallId": "t1",
            "title": "dsh_echo_0123456789ab", "kind": "other", "status": "pending",
            "rawInput": {"arguments": {}},
            "_meta": {"mcp": {"tool": "echo_0123456789ab", "server": "dsh"}, "is_mcp_tool_call": true}}))?;
        assert!(tracker.map(announced.clone()).is_none());
        // 1.3.0 re-sends the pending tool_call verbatim; still nothing to do.
        assert!(tracker.map(announced).is_none());
        let running = update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"}),
        )?;
        assert!(tracker.map(running).is_none());
        let done = update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}),
        )?;
        assert!(tracker.map(done).is_none());
        Ok(())
    }

    #[test]
    fn a_running_native_tool_is_reported() -> crate::TestResult {
        let mut tracker = UpdateTracker::new(Some(bridge()));
        let native = update(json!({"sessionUpdate": "tool_call", "toolCallId": "n1",
            "title": "Running view_file", "kind": "read", "status": "in_progress"}))?;
        assert!(matches!(
            tracker.map(native),
            Some(ServerEvent::NativeAction)
        ));
        let pending = update(json!({"sessionUpdate": "tool_call", "toolCallId": "n2",
            "title": "Run run_command?", "kind": "execute", "status": "pending"}))?;
        assert!(tracker.map(pending).is_none());
        let refused = update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "n2", "status": "failed"}),
        )?;
        assert!(tracker.map(refused).is_none());
        Ok(())
    }

    /// A server tool that only starts running in a `tool_call_update` is reported; a
    /// bridge call's update, known by its `_meta` alone, is not.
    #[test]
    fn a_native_tool_started_by_an_update_is_reported() -> crate::TestResult {
        let mut tracker = UpdateTracker::new(Some(bridge()));
        let pending = update(json!({"sessionUpdate": "tool_call", "toolCallId": "n3",
            "title": "Run run_command?", "kind": "execute", "status": "pending"}))?;
        assert!(tracker.map(pending).is_none());
        let running = update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "n3", "status": "in_progress"}),
        )?;
        assert!(matches!(
            tracker.map(running),
            Some(ServerEvent::NativeAction)
        ));
        let unannounced_bridge = update(json!({"sessionUpdate": "tool_call_update",
            "toolCallId": "b9", "status": "in_progress",
            "_meta": {"mcp": {"tool": "echo_0123456789ab", "server": "dsh"}, "is_mcp_tool_call": true}}))?;
        assert!(tracker.map(unannounced_bridge).is_none());
        Ok(())
    }

    /// Text chunks become deltas carrying their text; empty and non-text chunks are
    /// dropped.
    #[test]
    fn text_chunks_carry_their_text_and_empty_ones_nothing() -> crate::TestResult {
        let mut tracker = UpdateTracker::new(None);
        let text = update(
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hello"}}),
        )?;
        match tracker.map(text) {
            Some(ServerEvent::Chunk {
                kind: BlockKind::Text,
                text,
            }) => assert_eq!(text, "hello"),
            other => return Err(format!("a text chunk became {other:?}").into()),
        }
        let empty = update(
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": ""}}),
        )?;
        assert!(
            tracker.map(empty).is_none(),
            "an empty chunk became a delta"
        );
        let empty_thought = update(
            json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": ""}}),
        )?;
        assert!(tracker.map(empty_thought).is_none());
        let image = update(json!({"sessionUpdate": "agent_message_chunk",
            "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}}))?;
        assert!(
            tracker.map(image).is_none(),
            "a non-text chunk became a delta"
        );
        Ok(())
    }

    #[test]
    fn chunks_become_deltas_of_their_kind() -> crate::TestResult {
        let mut tracker = UpdateTracker::new(None);
        let thought = update(
            json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hm"}}),
        )?;
        assert!(matches!(
            tracker.map(thought),
            Some(ServerEvent::Chunk {
                kind: BlockKind::Reasoning,
                ..
            })
        ));
        let usage = update(json!({"sessionUpdate": "usage_update", "used": 10, "size": 100}))?;
        assert!(matches!(
            tracker.map(usage),
            Some(ServerEvent::Usage { size: 100 })
        ));
        Ok(())
    }
}
