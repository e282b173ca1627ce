//! The server's built-in (native) tools the adapter disables in every session it opens:
//! the one list of their names, and the `_meta` that carries it on `session/new`
//! (`{"agy": {"disabledTools": [...]}}`, B06).
//!
//! Source: `docs/antigravity-1.3.0.md` §21. 1.3.0 reads `_meta.agy.disabledTools` on
//! `session/new`, `session/load` and `session/resume`, leaves the named tools out of what
//! it offers the model, and skips names it does not know. The evidence is second-hand
//! (third-party captures, not Google's documentation), so this is a first layer only: a
//! native action that still runs is detected, cancelled and reported as before (C64).

use agent_client_protocol::v1::schema::Meta;
use serde_json::json;

/// 1.3.0's built-in tool names, as seen in the wild (`docs/antigravity-1.3.0.md` §21);
/// every session the adapter opens disables them all.
pub const NATIVE_TOOLS: [&str; 12] = [
    "list_directory",
    "search_directory",
    "find_file",
    "view_file",
    "create_file",
    "edit_file",
    "run_command",
    "ask_question",
    "start_subagent",
    "generate_image",
    "search_web",
    "read_url_content",
];

/// The names a session disables: [`NATIVE_TOOLS`], then `extra` (the configured
/// `extra_disabled_tools`), each name once, in that order.
pub(crate) fn disabled_tools(extra: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::with_capacity(NATIVE_TOOLS.len() + extra.len());
    for name in NATIVE_TOOLS
        .iter()
        .copied()
        .chain(extra.iter().map(String::as_str))
    {
        if !names.iter().any(|known| known == name) {
            names.push(name.to_owned());
        }
    }
    names
}

/// The `_meta` of a `session/new`: `{"agy": {"disabledTools": [...]}}`, the names of
/// [`disabled_tools`].
pub(crate) fn session_meta(extra: &[String]) -> Meta {
    let mut meta = Meta::new();
    meta.insert(
        "agy".to_owned(),
        json!({ "disabledTools": disabled_tools(extra) }),
    );
    meta
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    /// Extra names follow the built-ins; a name given twice, or one that is a
    /// built-in already, appears once, at its first place.
    #[test]
    fn extras_follow_the_builtins_each_name_once() {
        let extra: Vec<String> = ["my_tool", "run_command", "other", "my_tool"]
            .map(String::from)
            .to_vec();
        let names = disabled_tools(&extra);
        let builtins: Vec<&str> = NATIVE_TOOLS.to_vec();
        assert_eq!(names[..NATIVE_TOOLS.len()], builtins);
        assert_eq!(names[NATIVE_TOOLS.len()..], ["my_tool", "other"]);
        assert_eq!(disabled_tools(&[]), builtins);
    }

    /// The `_meta` is exactly `{"agy": {"disabledTools": [...]}}`, and it survives the
    /// SDK's serialization of a `session/new` as `_meta`.
    #[test]
    fn the_meta_rides_on_session_new() -> crate::TestResult {
        let meta = session_meta(&["extra_tool".to_owned()]);
        let mut expected: Vec<Value> = NATIVE_TOOLS.iter().map(|name| json!(name)).collect();
        expected.push(json!("extra_tool"));
        assert_eq!(
            Value::Object(meta.clone()),
            json!({"agy": {"disabledTools": expected}})
        );
        let request =
            agent_client_protocol::v1::schema::NewSessionRequest::new("/scratch/s").meta(meta);
        let wire = serde_json::to_value(&request)?;
        assert_eq!(
            wire.pointer("/_meta/agy/disabledTools"),
            Some(&Value::Array(expected))
        );
        Ok(())
    }
}
