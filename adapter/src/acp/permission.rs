//! The permission policy: `allow_once` only for a tool call whose `_meta.mcp.server` is
//! exactly the bridge's name and whose `_meta.mcp.tool` is a tool the bridge exported;
//! every other request (native tools, questions, unknown servers) is cancelled. No other
//! option kind is ever selected, so YOLO-like "always" grants never happen.

use agent_client_protocol::v1::schema::{
    PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome,
};
use serde_json::Value;

use crate::bridge::BridgeIdentity;

/// The `_meta.mcp` server and tool a tool call names, if any.
pub(crate) fn mcp_target(meta: Option<&serde_json::Map<String, Value>>) -> Option<(&str, &str)> {
    let mcp = meta?.get("mcp")?;
    Some((mcp.get("server")?.as_str()?, mcp.get("tool")?.as_str()?))
}

/// Whether a tool call is one of the bridge's.
pub(crate) fn is_bridge_call(
    meta: Option<&serde_json::Map<String, Value>>,
    bridge: Option<&BridgeIdentity>,
) -> bool {
    match (mcp_target(meta), bridge) {
        (Some((server, tool)), Some(bridge)) => {
            server == bridge.server && bridge.tools.contains(tool)
        }
        _ => false,
    }
}

/// Answers a permission request.
pub(crate) fn answer(
    request: &RequestPermissionRequest,
    bridge: Option<&BridgeIdentity>,
) -> RequestPermissionResponse {
    let allow_once = request
        .options
        .iter()
        .find(|option| option.kind == PermissionOptionKind::AllowOnce);
    let outcome = match allow_once {
        Some(option) if is_bridge_call(request.tool_call.meta.as_ref(), bridge) => {
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
    use serde_json::json;

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
        let response = answer(&request(meta, agy_options()), Some(&bridge()));
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
        let response = answer(&request(meta, options), Some(&bridge()));
        assert!(matches!(
            response.outcome,
            RequestPermissionOutcome::Cancelled
        ));
    }
}
