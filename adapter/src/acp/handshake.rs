//! The handshake, in two parts: `initialize` (ACP v1 only, no fs, no terminal) once per
//! process, and per session `session/new` with the bridge as the only MCP server and the
//! server's built-in tools disabled ([`super::native_tools`]), one `authenticate` with the
//! configured method (never switching a method the server is set up for; an OAuth one
//! bounded, and only when the server can open a browser; see [`super::sign_in`]) and
//! retry when the server answers "authentication required",
//! then the requested model through `session/set_config_option` (unless the request asks
//! for the server's default). Also reads the model catalogue a session offers, and closes
//! a session when the server advertises `session/close`.

use std::path::Path;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, ClientCapabilities, CloseSessionRequest, Implementation,
    InitializeRequest, InitializeResponse, McpServer, NewSessionRequest, NewSessionResponse,
    SessionConfigKind, SessionConfigOption, SessionConfigSelectOptions, SessionId,
    SetSessionConfigOptionRequest,
};
use agent_client_protocol::{Agent, ErrorCode};

use super::agent_profile::AgentProfile;
use super::native_tools::session_meta;
use super::sign_in::{SignIn, SignInProblem};
use crate::config::{ADAPTER_ID, AuthMethod};
use crate::error::AdapterError;

/// The session config option that selects the model.
const MODEL_OPTION: &str = "model";

/// What `initialize` told about the server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ServerInfo {
    /// The sign-in methods it offers, of the four the adapter knows.
    pub(crate) offered: OfferedMethods,
    /// Whether it advertises `session/close` (1.3.0 does not).
    pub(crate) closes_sessions: bool,
    /// The profile of the agent its `agentInfo.name` names (C21).
    pub(crate) profile: AgentProfile,
}

/// A set of [`AuthMethod`]s (what `initialize` advertised).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct OfferedMethods(u8);

impl OfferedMethods {
    fn bit(method: AuthMethod) -> u8 {
        match method {
            AuthMethod::OauthPersonal => 1,
            AuthMethod::OauthBusiness => 2,
            AuthMethod::GeminiApiKey => 4,
            AuthMethod::AgentPlatform => 8,
        }
    }

    /// The known methods among `ids`.
    pub(crate) fn from_ids(ids: impl IntoIterator<Item = String>) -> Self {
        Self(
            ids.into_iter()
                .filter_map(|id| AuthMethod::from_id(&id))
                .fold(0, |set, method| set | Self::bit(method)),
        )
    }

    /// Whether `method` is among them.
    pub(crate) fn offers(self, method: AuthMethod) -> bool {
        self.0 & Self::bit(method) != 0
    }
}

/// Sends `initialize` and returns the server's whole answer: a server of another ACP
/// version is named by its version (C05), any other failure by its code.
pub(crate) async fn initialize_answer(
    cx: &ConnectionTo<Agent>,
) -> Result<InitializeResponse, AdapterError> {
    cx.send_request(
        InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(ClientCapabilities::new())
            .client_info(Implementation::new(ADAPTER_ID, env!("CARGO_PKG_VERSION"))),
    )
    .block_task()
    .await
    .map_err(|e| match negotiated_other_version(&e) {
        Some(version) => AdapterError::ProtocolVersion(version),
        None => AdapterError::remote("initialize", &e),
    })
}

/// Sends `initialize`, once per process.
pub(crate) async fn initialize(cx: &ConnectionTo<Agent>) -> Result<ServerInfo, AdapterError> {
    let init = initialize_answer(cx).await?;
    Ok(ServerInfo {
        offered: OfferedMethods::from_ids(init.auth_methods.iter().map(|m| m.id().to_string())),
        closes_sessions: init.agent_capabilities.session_capabilities.close.is_some(),
        profile: AgentProfile::of_agent(init.agent_info.as_ref().map(|info| info.name.as_str())),
    })
}

/// The ACP version a server answered `initialize` with, when the SDK refused the answer
/// for not being version 1 (C05). The SDK (a v1 client) refuses it itself, as a local
/// `-32600` whose data reads "required ACP protocol version 1 but peer negotiated N; …";
/// only the number is kept.
fn negotiated_other_version(error: &agent_client_protocol::Error) -> Option<u16> {
    if error.code != ErrorCode::INVALID_REQUEST {
        return None;
    }
    let data = error.data.as_ref()?.as_str()?;
    let (_, rest) = data.split_once("peer negotiated ")?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// Opens a session in `cwd` with `mcp_servers`, signing in once if the server asks. Every
/// session disables the server's built-in tools and `extra_disabled_tools`
/// ([`super::native_tools`], B06).
pub(crate) async fn new_session(
    cx: &ConnectionTo<Agent>,
    info: ServerInfo,
    cwd: &Path,
    mcp_servers: Vec<McpServer>,
    extra_disabled_tools: &[String],
    sign_in: SignIn,
) -> Result<NewSessionResponse, AdapterError> {
    let new_session = NewSessionRequest::new(cwd)
        .mcp_servers(mcp_servers)
        .meta(session_meta(extra_disabled_tools));
    let session = match cx.send_request(new_session.clone()).block_task().await {
        Ok(session) => session,
        Err(error) if error.code == ErrorCode::AUTH_REQUIRED => {
            let method = sign_in.method;
            if let Some(refusal) = sign_in.refusal() {
                return Err(AdapterError::AuthRequired(refusal));
            }
            if !info.offered.offers(method) {
                return Err(AdapterError::AuthRequired(SignInProblem::MethodNotOffered(
                    method,
                )));
            }
            if method.needs_browser() && !sign_in.browser {
                return Err(AdapterError::AuthRequired(SignInProblem::NoBrowser));
            }
            if method.needs_browser() {
                sign_in.announce();
            }
            let authenticated = tokio::time::timeout(
                sign_in.timeout,
                cx.send_request(AuthenticateRequest::new(method.as_str()))
                    .block_task(),
            )
            .await
            .map_err(|_| {
                AdapterError::AuthRequired(SignInProblem::TimedOut(sign_in.timeout.as_secs()))
            })?;
            authenticated.map_err(|e| match e.code {
                // 1.3.0 refuses a key method whose variable is missing with -32602.
                ErrorCode::INVALID_PARAMS if !method.needs_browser() => {
                    AdapterError::AuthRequired(SignInProblem::MissingCredentials {
                        method,
                        needs: method.needs(),
                    })
                }
                _ => auth_error("authenticate", &e),
            })?;
            cx.send_request(new_session)
                .block_task()
                .await
                .map_err(|e| auth_error("session/new", &e))?
        }
        Err(error) => return Err(AdapterError::remote("session/new", &error)),
    };
    Ok(session)
}

/// Selects `model` in the session (unless `None`: the server's default).
pub(crate) async fn choose_model(
    cx: &ConnectionTo<Agent>,
    session: &NewSessionResponse,
    model: Option<&str>,
) -> Result<(), AdapterError> {
    match model {
        Some(model) => select_model(cx, session, model).await,
        None => Ok(()),
    }
}

/// Closes a finished session, when the server advertises `session/close`; otherwise it
/// is simply left behind (never resumed, C25).
pub(crate) async fn close_session(
    cx: &ConnectionTo<Agent>,
    info: ServerInfo,
    session: SessionId,
) -> Result<(), AdapterError> {
    if !info.closes_sessions {
        return Ok(());
    }
    cx.send_request(CloseSessionRequest::new(session))
        .block_task()
        .await
        .map_err(|e| AdapterError::remote("session/close", &e))?;
    Ok(())
}

/// The model ids the session's `model` option offers (the server's catalogue).
/// One model of the server's catalogue: its id, the server's own name and description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CatalogueModel {
    /// The option value `session/set_config_option` selects.
    pub(crate) id: String,
    /// The server's name for it.
    pub(crate) name: String,
    /// The server's description, when it gives one.
    pub(crate) description: Option<String>,
}

pub(crate) fn catalogue(session: &NewSessionResponse) -> Vec<CatalogueModel> {
    let mut models = Vec::new();
    let entry = |o: &agent_client_protocol::v1::schema::SessionConfigSelectOption| CatalogueModel {
        id: o.value.to_string(),
        name: o.name.clone(),
        description: o.description.clone(),
    };
    for option in session.config_options.iter().flatten() {
        if option.id.to_string() != MODEL_OPTION {
            continue;
        }
        let SessionConfigKind::Select(select) = &option.kind else {
            continue;
        };
        match &select.options {
            SessionConfigSelectOptions::Ungrouped(options) => {
                models.extend(options.iter().map(entry));
            }
            SessionConfigSelectOptions::Grouped(groups) => {
                models.extend(groups.iter().flat_map(|g| &g.options).map(entry))
            }
            _ => {}
        }
    }
    models
}

fn auth_error(method: &'static str, error: &agent_client_protocol::Error) -> AdapterError {
    // 1.3.0 answers a failed browser flow with -32000 "Onboarding failed" (the code
    // ACP names AUTH_REQUIRED): a sign-in that did not complete, not a server fault.
    if error.code == ErrorCode::AUTH_REQUIRED {
        AdapterError::AuthRequired(SignInProblem::NotCompleted)
    } else {
        AdapterError::remote(method, error)
    }
}

/// Whether the session's model option offers `model`.
fn offers(option: &SessionConfigOption, model: &str) -> bool {
    let SessionConfigKind::Select(select) = &option.kind else {
        return false;
    };
    match &select.options {
        SessionConfigSelectOptions::Ungrouped(options) => {
            options.iter().any(|o| o.value.to_string() == model)
        }
        SessionConfigSelectOptions::Grouped(groups) => groups
            .iter()
            .flat_map(|g| &g.options)
            .any(|o| o.value.to_string() == model),
        _ => false,
    }
}

/// The value a select option currently has.
fn current_value(option: &SessionConfigOption) -> Option<String> {
    match &option.kind {
        SessionConfigKind::Select(select) => Some(select.current_value.to_string()),
        _ => None,
    }
}

async fn select_model(
    cx: &ConnectionTo<Agent>,
    session: &NewSessionResponse,
    model: &str,
) -> Result<(), AdapterError> {
    let Some(option) = session
        .config_options
        .iter()
        .flatten()
        .find(|option| option.id.to_string() == MODEL_OPTION && offers(option, model))
    else {
        return Err(AdapterError::ModelUnavailable(model.to_owned()));
    };
    // A fresh session already on the model asked for needs no selection (1.3.0 takes
    // about 2.8 s to answer one).
    if current_value(option).is_some_and(|current| current == model) {
        return Ok(());
    }
    cx.send_request(SetSessionConfigOptionRequest::new(
        session.session_id.clone(),
        MODEL_OPTION,
        model,
    ))
    .block_task()
    .await
    .map_err(|e| AdapterError::remote("session/set_config_option", &e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn session(options: serde_json::Value) -> Result<NewSessionResponse, serde_json::Error> {
        serde_json::from_value(json!({"sessionId": "s1", "configOptions": [
            {"currentValue": "a", "id": "model", "name": "Model", "type": "select", "options": options},
            {"currentValue": "fast", "id": "mode", "name": "Mode", "type": "select",
             "options": [{"value": "fast", "name": "Fast"}]}
        ]}))
    }

    fn model_option(session: &NewSessionResponse) -> Option<&SessionConfigOption> {
        session
            .config_options
            .iter()
            .flatten()
            .find(|option| option.id.to_string() == MODEL_OPTION)
    }

    /// An `initialize` against the fake in process (over a duplex), answering
    /// `protocol_version`.
    async fn initialize_against(protocol_version: u64) -> Result<ServerInfo, AdapterError> {
        let mut script = fake_antigravity::script::Script::default();
        script.initialize.protocol_version = protocol_version;
        let (client_end, server_end) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server_end);
        let options = fake_antigravity::process::serve::ServeOptions::new(script);
        let _server = tokio_util::task::AbortOnDropHandle::new(tokio::spawn(
            fake_antigravity::process::serve::serve(options, server_read, server_write),
        ));
        let (client_read, client_write) = tokio::io::split(client_end);
        let connection =
            super::super::AcpConnection::connect_streams(client_write, client_read).await?;
        let answer = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            initialize(connection.cx()),
        )
        .await
        .map_err(|_| AdapterError::Timeout("initialize"))?;
        connection
            .close(std::time::Duration::from_millis(100))
            .await;
        answer
    }

    /// C05: the adapter speaks ACP v1 only; a server answering another version is refused
    /// with `ACP_VERSION_MISMATCH` and a message saying so (no remote text).
    #[tokio::test]
    async fn a_server_of_another_acp_version_is_refused() -> crate::TestResult {
        assert!(initialize_against(1).await.is_ok());
        let error = initialize_against(2)
            .await
            .err()
            .ok_or("a server answering ACP version 2 was accepted")?;
        let llm = error.to_llm_error();
        assert_eq!(llm.code, crate::contract::LlmErrorCode::AcpVersionMismatch);
        assert!(llm.message.contains("protocol version 2"), "{llm}");
        assert!(
            !llm.message.contains("peer negotiated"),
            "SDK text leaked: {llm}"
        );
        Ok(())
    }

    /// The catalogue is the model option's values, flat or grouped, never another
    /// option's.
    #[test]
    fn the_catalogue_reads_flat_and_grouped_model_options() -> crate::TestResult {
        let ids = |session: &NewSessionResponse| -> Vec<String> {
            catalogue(session).into_iter().map(|m| m.id).collect()
        };
        let flat = session(json!([{"value": "a", "name": "A"}, {"value": "b", "name": "B"}]))?;
        assert_eq!(ids(&flat), ["a", "b"]);
        let grouped = session(json!([
            {"group": "g1", "name": "Gemini", "options": [{"value": "a", "name": "A"}]},
            {"group": "g2", "name": "Claude", "options": [{"value": "c", "name": "C"}, {"value": "d", "name": "D"}]}
        ]))?;
        assert_eq!(ids(&grouped), ["a", "c", "d"]);
        Ok(())
    }

    /// A model is offered only when it is one of the option's values, flat or grouped.
    #[test]
    fn only_an_offered_value_is_offered() -> crate::TestResult {
        let flat = session(json!([{"value": "a", "name": "A"}, {"value": "b", "name": "B"}]))?;
        let option = model_option(&flat).ok_or("no model option")?;
        assert!(offers(option, "b"));
        assert!(!offers(option, "c"));
        let grouped = session(json!([
            {"group": "g1", "name": "Gemini", "options": [{"value": "a", "name": "A"}]},
            {"group": "g2", "name": "Claude", "options": [{"value": "c", "name": "C"}]}
        ]))?;
        let option = model_option(&grouped).ok_or("no model option")?;
        assert!(offers(option, "c"));
        assert!(offers(option, "a"));
        assert!(!offers(option, "b"));
        assert!(!offers(option, "C"));
        Ok(())
    }
}
