//! Opening and closing sessions (docs/antigravity-1.3.0.md §6): `session/new`,
//! `session/load` (replays the history first), `session/resume` (no replay),
//! `session/list`, `session/close`. Params are validated first (-32602), then the sign-in
//! state (-32000). Each of new, load and resume takes the built-in tools the client
//! disabled (`_meta.agy.disabledTools`, §21). Sessions live in this process only: load
//! and resume know the sessions this process opened. A new session's conversation files
//! are written (`session_new.conversation_files`, §2) before it is answered.

use agent_client_protocol::Error;
use serde_json::{Value, json};

use crate::acp::params::ParamReader;
use crate::acp::rpc_errors::{auth_required, session_not_found};
use crate::acp::session_updates::{message_chunk, user_chunk};
use crate::mcp::client::McpPool;
use crate::state::fake_agent::FakeAgent;
use crate::state::mcp_servers::{McpServerEntry, parse_mcp_servers};
use crate::state::session_config::SessionConfig;
use crate::state::sessions::Session;

/// A session that opened: what to send before the response, and the response.
#[derive(Debug, Clone, PartialEq)]
pub struct Opened {
    /// The session.
    pub session_id: String,
    /// `session/update`s to send before the response (the `load` replay).
    pub replay: Vec<Value>,
    /// The response body.
    pub body: Value,
}

fn mcp_pool(agent: &FakeAgent, servers: &[McpServerEntry]) -> McpPool {
    let http = servers
        .iter()
        .filter_map(|s| match s {
            McpServerEntry::Http(h) => Some(h.clone()),
            McpServerEntry::Sse(_) | McpServerEntry::Stdio(_) => None,
        })
        .collect();
    McpPool::new(http, agent.script.mcp_client.clone(), agent.journal.clone())
}

fn read_servers(reader: &mut ParamReader<'_>, items: Option<&Vec<Value>>) -> Vec<McpServerEntry> {
    match items.map(|items| parse_mcp_servers("mcpServers", items)) {
        Some(Ok(servers)) => servers,
        Some(Err(problems)) => {
            reader.problems(problems);
            Vec::new()
        }
        None => Vec::new(),
    }
}

/// The names in `_meta.agy.disabledTools` (docs/antigravity-1.3.0.md §21), as 1.3.0 reads
/// them: anything that is not a list of strings disables nothing, a non-string entry is
/// skipped (as an unknown name is).
pub fn disabled_tools(params: &Value) -> Vec<String> {
    params
        .pointer("/_meta/agy/disabledTools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn require_sign_in(agent: &FakeAgent) -> Result<(), Error> {
    if agent.is_signed_in() {
        Ok(())
    } else {
        Err(auth_required(&agent.gemini_home))
    }
}

/// `session/new {cwd, mcpServers}`.
pub fn new_session(agent: &FakeAgent, params: &Value) -> Result<Opened, Error> {
    let mut reader = ParamReader::new(params);
    let cwd = reader.required_str("cwd");
    let items = reader.required_array("mcpServers");
    let servers = read_servers(&mut reader, items);
    reader.finish()?;
    require_sign_in(agent)?;
    let session_id = uuid::Uuid::new_v4().to_string();
    let config = SessionConfig::initial(&agent.catalogue);
    let mut body = config.session_body(&agent.catalogue);
    body.insert("sessionId".into(), json!(session_id));
    let names: Vec<&str> = servers.iter().map(McpServerEntry::name).collect();
    let disabled = disabled_tools(params);
    agent.log.info(
        "server.py:212",
        &format!(
            "session {session_id} opened; MCP servers: [{}]; disabled tools: [{}]",
            names.join(", "),
            disabled.join(", ")
        ),
    );
    let cwd = cwd.unwrap_or_default();
    write_conversation_files(agent, &session_id, cwd);
    let pool = mcp_pool(agent, &servers);
    let mut session = Session::new(cwd.to_string(), servers, pool, config);
    session.disabled_tools = disabled;
    agent.sessions.insert(session_id.clone(), session);
    Ok(Opened {
        session_id,
        replay: Vec::new(),
        body: Value::Object(body),
    })
}

/// Writes a new session's conversation files, when they are kept, and holds its SQLite
/// files open (`session_new.hold_conversation_files`), first looking whether a held file
/// vanished; a failure (a read-only home, as a confined server's may be) is logged and the
/// session opens all the same.
fn write_conversation_files(agent: &FakeAgent, session_id: &str, cwd: &str) {
    let Some(files) = agent.conversation_files() else {
        return;
    };
    agent.look_at_held_files("session/new");
    if let Err(error) = files.create(session_id, cwd) {
        agent.log.warning(
            "conversation_store.py:88",
            &format!("could not write the conversation files of session {session_id}: {error}"),
        );
        return;
    }
    if !agent.script.session_new.hold_conversation_files {
        return;
    }
    if let Err(error) = agent
        .held_files
        .hold(session_id, &files.sqlite_files(session_id))
    {
        // The switch asked for the files to be held: a hold that failed would leave B08's
        // check of a live server's files proving nothing, so the run fails instead.
        agent.expectation_failed(
            0,
            0,
            format!(
                "session_new.hold_conversation_files: could not hold the files of session \
                 {session_id} open: {error}"
            ),
        );
    }
}

/// `session/load {sessionId, cwd, mcpServers}` (`replay = true`) and
/// `session/resume {sessionId, cwd, mcpServers?}` (`replay = false`).
pub fn reopen_session(agent: &FakeAgent, params: &Value, replay: bool) -> Result<Opened, Error> {
    let mut reader = ParamReader::new(params);
    let session_id = reader.required_str("sessionId");
    let cwd = reader.required_str("cwd");
    let items = if replay {
        reader.required_array("mcpServers")
    } else {
        reader.optional_array("mcpServers")
    };
    let servers = read_servers(&mut reader, items);
    reader.finish()?;
    require_sign_in(agent)?;
    let session_id = session_id.unwrap_or_default().to_string();
    let config = SessionConfig::initial(&agent.catalogue);
    let pool = items.map(|_| mcp_pool(agent, &servers));
    let history = agent.sessions.with(&session_id, |session| {
        session.cwd = cwd.unwrap_or_default().to_string();
        session.config = config.clone();
        session.disabled_tools = disabled_tools(params);
        if let Some(pool) = pool {
            session.mcp_servers = servers;
            session.mcp = std::sync::Arc::new(pool);
        }
        session.history.clone()
    });
    let Some(history) = history else {
        return Err(session_not_found(&session_id, &agent.gemini_home));
    };
    let replay = if replay {
        history
            .iter()
            .flat_map(|turn| {
                let reply = (!turn.agent_text.is_empty()).then(|| message_chunk(&turn.agent_text));
                std::iter::once(user_chunk(&turn.user_text)).chain(reply)
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(Opened {
        session_id,
        replay,
        body: Value::Object(config.session_body(&agent.catalogue)),
    })
}

/// `session/close {sessionId}`: forgets the session (cancelling its prompts).
pub fn close_session(agent: &FakeAgent, params: &Value) -> Result<Value, Error> {
    let mut reader = ParamReader::new(params);
    let session_id = reader.required_str("sessionId");
    reader.finish()?;
    agent.sessions.remove(session_id.unwrap_or_default());
    Ok(json!({}))
}

/// `session/list`: 1.3.0 on a fresh install lists nothing.
pub fn list_sessions() -> Value {
    json!({"sessions": []})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a list of strings under `_meta.agy.disabledTools` disables anything; a
    /// non-string entry is skipped.
    #[test]
    fn disabled_tools_reads_only_names_under_agy() {
        let names = |meta: Value| disabled_tools(&json!({"cwd": "/", "_meta": meta}));
        assert_eq!(
            names(json!({"agy": {"disabledTools": ["view_file", 3, "run_command"]}})),
            ["view_file", "run_command"]
        );
        for nothing in [
            json!({"agy": {"disabledTools": "view_file"}}),
            json!({"agy": {"enabledTools": ["view_file"]}}),
            json!({"disabledTools": ["view_file"]}),
            Value::Null,
        ] {
            assert!(names(nothing.clone()).is_empty(), "{nothing}");
        }
        assert!(disabled_tools(&json!({"cwd": "/"})).is_empty());
    }
}
