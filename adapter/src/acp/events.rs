//! `ServerEvent`s: what a turn learns from the server, and `UpdateTracker`, which maps ACP
//! session updates into them and answers the turn's permission requests. Bridge tool
//! calls (as the agent's profile names them, or allowed by a permission answer) are
//! tracked and ignored (only real MCP requests create DSH calls). A tool call of the
//! server's own that starts running is reported as a native action, except one whose
//! permission the adapter refused: that one is judged by how it ends (C21), `completed`
//! meaning it ran (a native action), `failed` or `cancelled` that it did not.

use std::collections::HashSet;

use agent_client_protocol::v1::schema::{
    ContentBlock, RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SessionUpdate, StopReason, ToolCallStatus,
};
use serde_json::{Map, Value};

use super::agent_profile::{AgentProfile, ToolCallFacts};
use super::permission;
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

/// Maps session updates to events and answers permission requests, remembering which
/// tool calls are the bridge's and which the adapter refused.
#[derive(Debug)]
pub(crate) struct UpdateTracker {
    bridge: Option<BridgeIdentity>,
    profile: AgentProfile,
    bridge_calls: HashSet<String>,
    refused_calls: HashSet<String>,
}

fn is_running(status: Option<ToolCallStatus>) -> bool {
    matches!(
        status,
        Some(ToolCallStatus::InProgress | ToolCallStatus::Completed)
    )
}

impl UpdateTracker {
    pub(crate) fn new(bridge: Option<BridgeIdentity>, profile: AgentProfile) -> Self {
        Self {
            bridge,
            profile,
            bridge_calls: HashSet::new(),
            refused_calls: HashSet::new(),
        }
    }

    /// Answers a permission request of the turn's session ([`permission::answer`]) and
    /// remembers the call as a bridge call (allowed) or a refused one (cancelled).
    pub(crate) fn answer_permission(
        &mut self,
        request: &RequestPermissionRequest,
    ) -> RequestPermissionResponse {
        let response = permission::answer(request, self.bridge.as_ref(), self.profile);
        let id = request.tool_call.tool_call_id.0.to_string();
        match response.outcome {
            RequestPermissionOutcome::Selected(_) => self.bridge_calls.insert(id),
            _ => self.refused_calls.insert(id),
        };
        response
    }

    /// Whether the call `id` is a bridge call: known as one, or named as one now (then
    /// remembered, since its later updates may carry only the id).
    fn is_bridge_call(
        &mut self,
        id: &str,
        meta: Option<&Map<String, Value>>,
        title: Option<&str>,
    ) -> bool {
        if self.bridge_calls.contains(id) {
            return true;
        }
        let Some(bridge) = self.bridge.as_ref() else {
            return false;
        };
        let facts = ToolCallFacts { meta, title, id };
        let named = self.profile.names_bridge(facts, bridge);
        if named {
            self.bridge_calls.insert(id.to_owned());
        }
        named
    }

    /// What a non-bridge call's `status` means: a refused call ran only if it
    /// `completed`; any other call runs from its first `in_progress` or `completed`.
    fn native_action(&self, id: &str, status: Option<ToolCallStatus>) -> Option<ServerEvent> {
        let ran = if self.refused_calls.contains(id) {
            status == Some(ToolCallStatus::Completed)
        } else {
            is_running(status)
        };
        ran.then_some(ServerEvent::NativeAction)
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
                let id = call.tool_call_id.0.to_string();
                if self.is_bridge_call(&id, call.meta.as_ref(), Some(&call.title)) {
                    None
                } else {
                    self.native_action(&id, Some(call.status))
                }
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let id = update.tool_call_id.0.to_string();
                let title = update.fields.title.as_deref();
                if self.is_bridge_call(&id, update.meta.as_ref(), title) {
                    None
                } else {
                    self.native_action(&id, update.fields.status)
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
        let mut tracker = UpdateTracker::new(Some(bridge()), AgentProfile::Antigravity);
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
        let mut tracker = UpdateTracker::new(Some(bridge()), AgentProfile::Antigravity);
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
        let mut tracker = UpdateTracker::new(Some(bridge()), AgentProfile::Antigravity);
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

    fn permission(id: &str, title: &str) -> Result<RequestPermissionRequest, serde_json::Error> {
        serde_json::from_value(json!({"sessionId": "s", "toolCall": {"toolCallId": id,
            "title": title, "status": "pending"},
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "deny", "name": "Deny", "kind": "reject_once"}]}))
    }

    fn status(id: &str, status: &str) -> Result<SessionUpdate, serde_json::Error> {
        update(json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": status}))
    }

    /// A call whose permission the adapter refused is judged by how it ends: running is
    /// not yet a native action, `failed` means it did not run, `completed` that it ran.
    #[test]
    fn a_refused_call_is_judged_by_how_it_ends() -> crate::TestResult {
        let mut tracker = UpdateTracker::new(Some(bridge()), AgentProfile::Antigravity);
        for id in ["r1", "r2"] {
            let pending = update(json!({"sessionUpdate": "tool_call", "toolCallId": id,
                "title": "Run shell", "kind": "execute", "status": "pending"}))?;
            assert!(tracker.map(pending).is_none());
            let answer = tracker.answer_permission(&permission(id, "Run shell")?);
            assert!(matches!(
                answer.outcome,
                RequestPermissionOutcome::Cancelled
            ));
            assert!(tracker.map(status(id, "in_progress")?).is_none());
        }
        assert!(tracker.map(status("r1", "failed")?).is_none());
        assert!(tracker.map(status("r2", "cancelled")?).is_none());
        let ran = update(json!({"sessionUpdate": "tool_call", "toolCallId": "r3",
            "title": "Run shell", "kind": "execute", "status": "pending"}))?;
        assert!(tracker.map(ran).is_none());
        tracker.answer_permission(&permission("r3", "Run shell")?);
        assert!(tracker.map(status("r3", "in_progress")?).is_none());
        assert!(matches!(
            tracker.map(status("r3", "completed")?),
            Some(ServerEvent::NativeAction)
        ));
        // A call never asked about keeps the old rule: running is a native action.
        assert!(matches!(
            tracker.map(status("r4", "in_progress")?),
            Some(ServerEvent::NativeAction)
        ));
        Ok(())
    }

    const GEMINI_ID: &str = "mcp_dsh_echo_0123456789ab__mcp_dsh_echo_0123456789ab_1765123456789_0";
    const GEMINI_TITLE: &str = "echo_0123456789ab (dsh MCP Server)";

    /// Under the gemini-cli profile a bridge call is known by its title and id, and its
    /// later updates by the id alone; under 1.3.0's profile the same call is native.
    #[rstest::rstest]
    #[case::gemini_cli(AgentProfile::GeminiCli, false)]
    #[case::antigravity(AgentProfile::Antigravity, true)]
    fn a_gemini_cli_bridge_call_is_known_by_title_and_id(
        #[case] profile: AgentProfile,
        #[case] native: bool,
    ) -> crate::TestResult {
        let mut tracker = UpdateTracker::new(Some(bridge()), profile);
        let announced = update(
            json!({"sessionUpdate": "tool_call", "toolCallId": GEMINI_ID,
            "title": GEMINI_TITLE, "kind": "other", "status": "pending"}),
        )?;
        assert!(tracker.map(announced).is_none());
        let running = tracker.map(status(GEMINI_ID, "in_progress")?);
        assert_eq!(matches!(running, Some(ServerEvent::NativeAction)), native);
        Ok(())
    }

    /// A call the permission answer allowed is a bridge call for its later updates, even
    /// if none carries its title.
    #[test]
    fn an_allowed_call_is_a_bridge_call_by_its_id() -> crate::TestResult {
        let mut tracker = UpdateTracker::new(Some(bridge()), AgentProfile::GeminiCli);
        let answer = tracker.answer_permission(&permission(GEMINI_ID, GEMINI_TITLE)?);
        assert!(matches!(
            answer.outcome,
            RequestPermissionOutcome::Selected(_)
        ));
        assert!(tracker.map(status(GEMINI_ID, "in_progress")?).is_none());
        assert!(tracker.map(status(GEMINI_ID, "completed")?).is_none());
        Ok(())
    }

    /// Text chunks become deltas carrying their text; empty and non-text chunks are
    /// dropped.
    #[test]
    fn text_chunks_carry_their_text_and_empty_ones_nothing() -> crate::TestResult {
        let mut tracker = UpdateTracker::new(None, AgentProfile::Antigravity);
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
        let mut tracker = UpdateTracker::new(None, AgentProfile::Antigravity);
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
