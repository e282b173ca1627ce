//! Agent profiles: how each agent the adapter knows names a call to the bridge in a
//! permission request or a tool call update (C21). [`AgentProfile::Antigravity`] (1.3.0,
//! the default) names it by `_meta.mcp`; [`AgentProfile::GeminiCli`] by its title and tool
//! call id. Either way only the bridge's exact server name and a name it exported this
//! turn identify it: never a prefix or a partial match. Also owns which profile a process
//! gets, from `initialize`'s `agentInfo.name` or the configured [`AgentProfileChoice`].

use serde_json::{Map, Value};

use crate::bridge::BridgeIdentity;
use crate::config::AgentProfileChoice;

/// The `agentInfo.name` Gemini CLI answers `initialize` with.
const GEMINI_CLI_AGENT_NAME: &str = "gemini-cli";

/// How an agent names a bridge call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum AgentProfile {
    /// Antigravity 1.3.0: `_meta.mcp.server` is exactly the bridge's name and
    /// `_meta.mcp.tool` a name it exported.
    #[default]
    Antigravity,
    /// Gemini CLI (0.61): no `_meta.mcp`; the title is exactly `<exported> (<server> MCP
    /// Server)` and the tool call id `mcp_<server>_<exported>__mcp_<server>_<exported>_`
    /// followed by digits and underscores only. A `_meta.mcp`, when present, decides alone,
    /// as for Antigravity.
    GeminiCli,
}

/// What a tool call shows of itself: its `_meta`, title and id.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToolCallFacts<'a> {
    /// Its `_meta`, if any.
    pub(crate) meta: Option<&'a Map<String, Value>>,
    /// Its title, if the message carries one.
    pub(crate) title: Option<&'a str>,
    /// Its tool call id.
    pub(crate) id: &'a str,
}

/// The `_meta.mcp` server and tool a tool call names, if any.
pub(crate) fn mcp_target(meta: Option<&Map<String, Value>>) -> Option<(&str, &str)> {
    let mcp = meta?.get("mcp")?;
    Some((mcp.get("server")?.as_str()?, mcp.get("tool")?.as_str()?))
}

impl AgentProfile {
    /// The profile of the agent whose `initialize` answer named it `agent_name`: Gemini
    /// CLI's, or else Antigravity's.
    pub(crate) fn of_agent(agent_name: Option<&str>) -> Self {
        if agent_name == Some(GEMINI_CLI_AGENT_NAME) {
            Self::GeminiCli
        } else {
            Self::Antigravity
        }
    }

    /// The profile `choice` means for an agent whose `initialize` answer gave `detected`.
    pub(crate) fn chosen(choice: AgentProfileChoice, detected: Self) -> Self {
        match choice {
            AgentProfileChoice::Auto => detected,
            AgentProfileChoice::Antigravity => Self::Antigravity,
            AgentProfileChoice::GeminiCli => Self::GeminiCli,
        }
    }

    /// Whether `call` is a call to `bridge`, as this profile names one.
    pub(crate) fn names_bridge(self, call: ToolCallFacts<'_>, bridge: &BridgeIdentity) -> bool {
        if let Some((server, tool)) = mcp_target(call.meta) {
            return server == bridge.server && bridge.tools.contains(tool);
        }
        match self {
            Self::Antigravity => false,
            Self::GeminiCli => gemini_cli_names_bridge(call, bridge),
        }
    }
}

/// Gemini CLI's naming: the title `<exported> (<server> MCP Server)` and the id
/// `mcp_<server>_<exported>__mcp_<server>_<exported>_<digits and underscores>`, both
/// exact, `<exported>` one of the bridge's exported names.
fn gemini_cli_names_bridge(call: ToolCallFacts<'_>, bridge: &BridgeIdentity) -> bool {
    let Some(title) = call.title else {
        return false;
    };
    let suffix = format!(" ({} MCP Server)", bridge.server);
    let Some(exported) = title.strip_suffix(&suffix) else {
        return false;
    };
    if !bridge.tools.contains(exported) {
        return false;
    }
    let declared = format!("mcp_{}_{exported}", bridge.server);
    let Some(stamp) = call.id.strip_prefix(&format!("{declared}__{declared}_")) else {
        return false;
    };
    stamp.starts_with(|c: char| c.is_ascii_digit())
        && stamp.chars().all(|c| c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    /// This turn's bridge: `read_file` exported with this turn's hash.
    fn bridge() -> BridgeIdentity {
        BridgeIdentity {
            server: "dsh".into(),
            tools: ["read_file_c9f8123bd272".to_owned()].into(),
        }
    }

    const TITLE: &str = "read_file_c9f8123bd272 (dsh MCP Server)";
    const ID: &str =
        "mcp_dsh_read_file_c9f8123bd272__mcp_dsh_read_file_c9f8123bd272_1765123456789_0";

    fn names_bridge(profile: AgentProfile, meta: Value, title: Option<&str>, id: &str) -> bool {
        let meta = meta.as_object().cloned();
        let call = ToolCallFacts {
            meta: meta.as_ref(),
            title,
            id,
        };
        profile.names_bridge(call, &bridge())
    }

    #[rstest]
    #[case::exact(TITLE, ID, true)]
    #[case::title_with_more_text("read_file_c9f8123bd272 (dsh MCP Server) ", ID, false)]
    #[case::title_prefix_text("Run read_file_c9f8123bd272 (dsh MCP Server)", ID, false)]
    #[case::title_of_another_server("read_file_c9f8123bd272 (dshx MCP Server)", ID, false)]
    #[case::title_of_a_partial_name("read_file_c9f8123bd27 (dsh MCP Server)", ID, false)]
    #[case::title_of_a_longer_name(
        "read_file_c9f8123bd272x (dsh MCP Server)",
        "mcp_dsh_read_file_c9f8123bd272x__mcp_dsh_read_file_c9f8123bd272x_1_0",
        false
    )]
    #[case::unexported_name(
        "run_command (dsh MCP Server)",
        "mcp_dsh_run_command__mcp_dsh_run_command_1_0",
        false
    )]
    #[case::previous_turns_hash(
        "read_file_0123456789ab (dsh MCP Server)",
        "mcp_dsh_read_file_0123456789ab__mcp_dsh_read_file_0123456789ab_1_0",
        false
    )]
    #[case::id_of_a_longer_name(
        TITLE,
        "mcp_dsh_read_file_c9f8123bd272x__mcp_dsh_read_file_c9f8123bd272x_1_0",
        false
    )]
    #[case::id_of_another_server(
        TITLE,
        "mcp_dshx_read_file_c9f8123bd272__mcp_dshx_read_file_c9f8123bd272_1_0",
        false
    )]
    #[case::id_with_text_after(
        TITLE,
        "mcp_dsh_read_file_c9f8123bd272__mcp_dsh_read_file_c9f8123bd272_1_0x",
        false
    )]
    #[case::id_without_stamp(
        TITLE,
        "mcp_dsh_read_file_c9f8123bd272__mcp_dsh_read_file_c9f8123bd272_",
        false
    )]
    #[case::id_halves_differ(
        TITLE,
        "mcp_dsh_read_file_c9f8123bd272__mcp_dshx_read_file_c9f8123bd272_1_0",
        false
    )]
    #[case::id_declared_name_only(TITLE, "mcp_dsh_read_file_c9f8123bd272", false)]
    #[case::id_with_a_prefix(
        TITLE,
        "x_mcp_dsh_read_file_c9f8123bd272__mcp_dsh_read_file_c9f8123bd272_1_0",
        false
    )]
    fn gemini_cli_names_the_bridge_by_exact_title_and_id(
        #[case] title: &str,
        #[case] id: &str,
        #[case] named: bool,
    ) {
        assert_eq!(
            names_bridge(AgentProfile::GeminiCli, Value::Null, Some(title), id),
            named
        );
        // 1.3.0's rule is unchanged: without `_meta.mcp` nothing is the bridge's.
        assert!(!names_bridge(
            AgentProfile::Antigravity,
            Value::Null,
            Some(title),
            id
        ));
    }

    #[rstest]
    #[case::antigravity(AgentProfile::Antigravity)]
    #[case::gemini_cli(AgentProfile::GeminiCli)]
    fn an_exact_mcp_meta_names_the_bridge_and_decides_alone(#[case] profile: AgentProfile) {
        let exact = json!({"mcp": {"server": "dsh", "tool": "read_file_c9f8123bd272"}});
        assert!(names_bridge(profile, exact, None, "call-1"));
        let other = json!({"mcp": {"server": "dshx", "tool": "read_file_c9f8123bd272"}});
        assert!(!names_bridge(profile, other, Some(TITLE), ID));
        let unexported = json!({"mcp": {"server": "dsh", "tool": "read_file"}});
        assert!(!names_bridge(profile, unexported, Some(TITLE), ID));
    }

    #[test]
    fn a_gemini_cli_call_without_its_title_is_not_the_bridges() {
        assert!(!names_bridge(
            AgentProfile::GeminiCli,
            Value::Null,
            None,
            ID
        ));
    }

    #[rstest]
    #[case::gemini_cli(Some("gemini-cli"), AgentProfile::GeminiCli)]
    #[case::antigravity(Some("antigravity-acp"), AgentProfile::Antigravity)]
    #[case::other_case(Some("Gemini-CLI"), AgentProfile::Antigravity)]
    #[case::absent(None, AgentProfile::Antigravity)]
    fn initialize_names_the_profile(#[case] name: Option<&str>, #[case] profile: AgentProfile) {
        assert_eq!(AgentProfile::of_agent(name), profile);
    }

    #[test]
    fn the_configured_choice_overrides_initialize() {
        use AgentProfile::{Antigravity, GeminiCli};
        assert_eq!(
            AgentProfile::chosen(AgentProfileChoice::Auto, GeminiCli),
            GeminiCli
        );
        assert_eq!(
            AgentProfile::chosen(AgentProfileChoice::Auto, Antigravity),
            Antigravity
        );
        assert_eq!(
            AgentProfile::chosen(AgentProfileChoice::GeminiCli, Antigravity),
            GeminiCli
        );
        assert_eq!(
            AgentProfile::chosen(AgentProfileChoice::Antigravity, GeminiCli),
            Antigravity
        );
    }
}
