//! Changing a session's model and mode (docs/antigravity-1.3.0.md §7):
//! `session/set_config_option` answers the full updated `configOptions`; `session/set_mode`
//! and the legacy `session/set_model` answer `{}`. No `current_mode_update` /
//! `config_option_update` is sent.

use agent_client_protocol::Error;
use serde_json::{Value, json};

use crate::acp::params::ParamReader;
use crate::acp::rpc_errors::{ParamProblem, invalid_params, session_not_found};
use crate::state::fake_agent::FakeAgent;
use crate::state::session_config::ConfigError;

/// `session/set_config_option {sessionId, configId, value}`.
pub fn set_config_option(agent: &FakeAgent, params: &Value) -> Result<Value, Error> {
    let mut reader = ParamReader::new(params);
    let session_id = reader.required_str("sessionId");
    let config_id = reader.required_str("configId");
    let value = reader.required_any("value");
    reader.finish()?;
    let (session_id, config_id) = (
        session_id.unwrap_or_default(),
        config_id.unwrap_or_default(),
    );
    let value_text = match value {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    set(agent, session_id, config_id, &value_text, "value")?;
    agent
        .sessions
        .with(session_id, |s| s.config.config_options(&agent.catalogue))
        .map(|options| json!({ "configOptions": options }))
        .ok_or_else(|| session_not_found(session_id, &agent.gemini_home))
}

/// `session/set_mode {sessionId, modeId}`.
pub fn set_mode(agent: &FakeAgent, params: &Value) -> Result<Value, Error> {
    set_one(agent, params, "modeId", "mode")
}

/// `session/set_model {sessionId, modelId}` (legacy, still answered by the real server).
pub fn set_model(agent: &FakeAgent, params: &Value) -> Result<Value, Error> {
    set_one(agent, params, "modelId", "model")
}

fn set_one(
    agent: &FakeAgent,
    params: &Value,
    field: &str,
    config_id: &str,
) -> Result<Value, Error> {
    let mut reader = ParamReader::new(params);
    let session_id = reader.required_str("sessionId");
    let value = reader.required_str(field);
    reader.finish()?;
    let (session_id, value) = (session_id.unwrap_or_default(), value.unwrap_or_default());
    set(agent, session_id, config_id, value, field)?;
    Ok(json!({}))
}

fn set(
    agent: &FakeAgent,
    session_id: &str,
    config_id: &str,
    value: &str,
    value_field: &str,
) -> Result<(), Error> {
    let outcome = agent
        .sessions
        .with(session_id, |s| {
            s.config.set(&agent.catalogue, config_id, value)
        })
        .ok_or_else(|| session_not_found(session_id, &agent.gemini_home))?;
    outcome.map_err(|e| {
        let field = match e {
            ConfigError::UnknownOption(_) => "configId",
            ConfigError::UnknownValue { .. } => value_field,
        };
        invalid_params(&[ParamProblem::bad_value(vec![json!(field)], e.to_string())])
    })
}
