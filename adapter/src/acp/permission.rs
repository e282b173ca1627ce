//! The permission policy: `allow_once` only for a tool call that names the bridge exactly,
//! as the agent's profile names one ([`AgentProfile::names_bridge`]: on 1.3.0, the default,
//! `_meta.mcp.server` exactly the bridge's name and `_meta.mcp.tool` a tool it exported);
//! every other request (native tools, questions, unknown servers, near misses) is
//! cancelled. No other option kind is ever selected, so YOLO-like "always" grants never
//! happen.

use agent_client_protocol::v1::schema::{
    PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome,
};

use super::agent_profile::{AgentProfile, ToolCallFacts};
use crate::bridge::BridgeIdentity;

/// Whether the tool call a permission request asks about is a bridge call.
fn asks_for_bridge(
    request: &RequestPermissionRequest,
    bridge: Option<&BridgeIdentity>,
    profile: AgentProfile,
) -> bool {
    let Some(bridge) = bridge else {
        return false;
    };
    let call = &request.tool_call;
    let facts = ToolCallFacts {
        meta: call.meta.as_ref(),
        title: call.fields.title.as_deref(),
        id: &call.tool_call_id.0,
    };
    profile.names_bridge(facts, bridge)
}

/// Answers a permission request: `allow_once` for a bridge call, else `cancelled`.
pub(crate) fn answer(
    request: &RequestPermissionRequest,
    bridge: Option<&BridgeIdentity>,
    profile: AgentProfile,
) -> RequestPermissionResponse {
    let allow_once = request
        .options
        .iter()
        .find(|option| option.kind == PermissionOptionKind::AllowOnce);
    let outcome = match allow_once {
        Some(option) if asks_for_bridge(request, bridge, profile) => {
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                option.option_id.clone(),
            ))
        }
        _ => {
            tracing::info!("cancelled a permission request that is not for a bridge tool");
            RequestPermissionOutcome::Cancelled
        }
    };
    RequestPermissionResponse::new(outcome)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use agent_client_protocol::v1::schema::{
        PermissionOption, ToolCallUpdate, ToolCallUpdateFields,
    };
    use rstest::rstest;
    use serde_json::{Value, json};

    use super::*;

    fn bridge() -> BridgeIdentity {
        BridgeIdentity {
            server: "dsh".into(),
            tools: ["read_file_0123456789ab".to_owned()].into(),
        }
    }

    fn request(meta: Value, options: Vec<PermissionOption>) -> RequestPermissionRequest {
        let meta = meta.as_object().cloned();
        let call = ToolCallUpdate::new("call-1", ToolCallUpdateFields::new()).meta(meta);
        RequestPermissionRequest::new("s", call, options)
    }

    fn agy_options() -> Vec<PermissionOption> {
        vec![
            PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new("deny", "Deny", PermissionOptionKind::RejectOnce),
        ]
    }

    #[rstest]
    #[case::bridge_tool(json!({"mcp": {"server": "dsh", "tool": "read_file_0123456789ab"}}), Some("allow"))]
    #[case::other_server(json!({"mcp": {"server": "dsh2", "tool": "read_file_0123456789ab"}}), None)]
    #[case::server_case(json!({"mcp": {"server": "DSH", "tool": "read_file_0123456789ab"}}), None)]
    #[case::unexported_tool(json!({"mcp": {"server": "dsh", "tool": "run_command"}}), None)]
    #[case::native(json!({}), None)]
    #[case::no_meta(Value::Null, None)]
    fn only_exact_bridge_tools_are_allowed_once(#[case] meta: Value, #[case] chosen: Option<&str>) {
        let response = answer(
            &request(meta, agy_options()),
            Some(&bridge()),
            AgentProfile::Antigravity,
        );
        let got = match response.outcome {
            RequestPermissionOutcome::Selected(s) => Some(s.option_id.to_string()),
            _ => None,
        };
        assert_eq!(got.as_deref(), chosen);
    }

    #[test]
    fn allow_always_is_never_chosen() {
        let meta = json!({"mcp": {"server": "dsh", "tool": "read_file_0123456789ab"}});
        let options = vec![
            PermissionOption::new("always", "Always", PermissionOptionKind::AllowAlways),
            PermissionOption::new("deny", "Deny", PermissionOptionKind::RejectOnce),
        ];
        let response = answer(
            &request(meta, options),
            Some(&bridge()),
            AgentProfile::Antigravity,
        );
        assert!(matches!(
            response.outcome,
            RequestPermissionOutcome::Cancelled
        ));
    }

    /// Gemini CLI's request for a bridge call (no `_meta`, its title and id) is allowed
    /// once under its profile, never "always" for the tool or the server; under 1.3.0's
    /// profile it is cancelled.
    #[rstest]
    #[case::gemini_cli(AgentProfile::GeminiCli, Some("proceed_once"))]
    #[case::antigravity(AgentProfile::Antigravity, None)]
    fn a_gemini_cli_request_is_allowed_once_under_its_profile(
        #[case] profile: AgentProfile,
        #[case] chosen: Option<&str>,
    ) {
        let call = ToolCallUpdate::new(
            "mcp_dsh_read_file_0123456789ab__mcp_dsh_read_file_0123456789ab_1765123456789_0",
            ToolCallUpdateFields::new().title("read_file_0123456789ab (dsh MCP Server)"),
        );
        let options = vec![
            PermissionOption::new(
                "proceed_always_server",
                "Always allow dsh",
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(
                "proceed_always_tool",
                "Always allow",
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new("proceed_once", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new("cancel", "Reject", PermissionOptionKind::RejectOnce),
        ];
        let request = RequestPermissionRequest::new("s", call, options);
        let got = match answer(&request, Some(&bridge()), profile).outcome {
            RequestPermissionOutcome::Selected(s) => Some(s.option_id.to_string()),
            _ => None,
        };
        assert_eq!(got.as_deref(), chosen);
    }
}
