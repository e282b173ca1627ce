//! The recorded 1.3.0 wire bodies that do not depend on state: the `initialize` result,
//! the sign-in methods, the permission modes, the model catalogue and the available
//! commands (docs/antigravity-1.3.0.md §4, §6).
//!
//! The bodies are written out as JSON here on purpose, not built from the ACP schema
//! structs: the fake must match what the real server sends, independently of the SDK
//! types the adapter uses.

use serde_json::{Value, json};

/// The server's name in `agentInfo`.
pub const AGENT_NAME: &str = "antigravity-acp";
/// The server's title in `agentInfo`.
pub const AGENT_TITLE: &str = "Google Antigravity";
/// The server's version in `agentInfo`.
pub const AGENT_VERSION: &str = "1.3.0";
/// The build label printed by `--version`.
pub const BUILD_LABEL: &str = "agy_acp_server_1.3.0";

/// The model current in a new session when the script names none.
pub const DEFAULT_MODEL: &str = "gemini-3.8-flash-high";

/// The default catalogue: `(id, display name)`, in the recorded order
/// (docs/antigravity-1.3.0.md §6). The six of the 1.3.0 free tier (live, TL), plus the
/// 3.7 and 3.6 variants the TypeScript DSH plugin's 1.3.0 probe saw but did not spell
/// out (live, PROBE), with the ids and names RC01 listed verbatim (wire, PAB's
/// `docs/ACP-PROTOCOL-REFERENCE.md`): `gemini-3.7-flash-medium`, `-low`,
/// `gemini-3.6-flash-high`, `-medium`, `-low`. Eleven in all, in RC01's order.
pub const FREE_TIER_MODELS: &[(&str, &str)] = &[
    ("gemini-3.8-flash-high", "Gemini 3.8 Flash (High)"),
    ("gemini-3.8-flash-medium", "Gemini 3.8 Flash (Medium)"),
    ("gemini-3.8-flash-low", "Gemini 3.8 Flash (Low)"),
    ("gemini-3.7-flash-high", "Gemini 3.7 Flash (High)"),
    ("gemini-3.7-flash-medium", "Gemini 3.7 Flash (Medium)"),
    ("gemini-3.7-flash-low", "Gemini 3.7 Flash (Low)"),
    ("gemini-3.6-flash-high", "Gemini 3.6 Flash (High)"),
    ("gemini-3.6-flash-medium", "Gemini 3.6 Flash (Medium)"),
    ("gemini-3.6-flash-low", "Gemini 3.6 Flash (Low)"),
    ("gemini-pro-agent", "Gemini 3.1 Pro (High)"),
    ("gemini-3.1-pro-low", "Gemini 3.1 Pro (Low)"),
];

/// The permission modes: `(id, name, description)`.
pub const MODES: &[(&str, &str, &str)] = &[
    ("default", "Default", "Default permission prompt flow"),
    ("auto_edit", "Auto Edit", "Auto-approve file edit tools"),
    ("yolo", "YOLO", "Auto-approve all tools"),
];

/// The mode current in a new session.
pub const DEFAULT_MODE: &str = "default";

/// The sign-in method ids, in the advertised order.
pub const AUTH_METHOD_IDS: &[&str] = &[
    "oauth-personal",
    "oauth-business",
    "gemini-api-key",
    "agent-platform",
];

/// The `initialize` result of 1.3.0, answering `protocol_version` (1.3.0: 1).
pub fn initialize_result(protocol_version: u64) -> Value {
    json!({
        "protocolVersion": protocol_version,
        "agentCapabilities": {
            "loadSession": true,
            "promptCapabilities": {"image": true, "audio": true, "embeddedContext": true},
            "mcpCapabilities": {"http": true, "sse": true},
            "sessionCapabilities": {"list": {}, "resume": {}},
            "auth": {"logout": {}}
        },
        "authMethods": [
            {"description": "Log in with your Google account",
             "id": "oauth-personal", "name": "Log in with Google"},
            {"description": "Log in with your Gemini Enterprise account",
             "id": "oauth-business", "name": "Log in with Gemini Enterprise"},
            {"description": "Use an API key with Gemini Developer API",
             "id": "gemini-api-key", "name": "Gemini API key"},
            {"description": "Use Gemini Enterprise Agent Platform (formerly Vertex AI) with Application Default Credentials or an API key",
             "id": "agent-platform", "name": "Gemini Enterprise Agent Platform"}
        ],
        "agentInfo": {"name": AGENT_NAME, "title": AGENT_TITLE, "version": AGENT_VERSION}
    })
}

/// The `available_commands_update` sent right after a session opens.
pub fn available_commands_update() -> Value {
    json!({
        "availableCommands": [
            {"name": "plan",
             "description": "Plan carefully before executing a task (generates an implementation plan artifact and awaits user approval)."},
            {"name": "logout", "description": "Log out and clear stored credentials."}
        ],
        "sessionUpdate": "available_commands_update"
    })
}

/// The display name of a model id: the recorded name for a known id, otherwise one
/// derived the way the recorded names read (`gemini-3.6-flash-low` → `Gemini 3.6 Flash
/// (Low)`).
pub fn model_display_name(id: &str) -> String {
    if let Some((_, name)) = FREE_TIER_MODELS.iter().find(|(known, _)| *known == id) {
        return (*name).to_string();
    }
    let mut words: Vec<String> = id.split('-').map(capitalised).collect();
    let tier = words
        .last()
        .filter(|w| ["High", "Medium", "Low", "Minimal"].contains(&w.as_str()))
        .cloned();
    if let Some(tier) = tier {
        words.pop();
        format!("{} ({tier})", words.join(" "))
    } else {
        words.join(" ")
    }
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_names_follow_the_recorded_pattern() {
        assert_eq!(
            model_display_name("gemini-pro-agent"),
            "Gemini 3.1 Pro (High)"
        );
        assert_eq!(
            model_display_name("gemini-3.6-flash-low"),
            "Gemini 3.6 Flash (Low)"
        );
        assert_eq!(model_display_name("m2"), "M2");
    }
}
