//! The session handshake: `initialize` (no fs, no terminal), `session/new` with the bridge
//! as the only MCP server, one `authenticate(oauth-personal)` (bounded, and only when the
//! server can open a browser; see [`super::sign_in`]) and retry when the server answers
//! "authentication required", then the requested model through
//! `session/set_config_option` (unless the request asks for the server's default).

use std::path::Path;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, ClientCapabilities, Implementation, InitializeRequest, McpServer,
    NewSessionRequest, NewSessionResponse, SessionConfigKind, SessionConfigOption,
    SessionConfigSelectOptions, SessionId, SetSessionConfigOptionRequest,
};
use agent_client_protocol::{Agent, ErrorCode};

use super::sign_in::{SignIn, SignInProblem};
use crate::error::AdapterError;
use crate::register::ADAPTER_ID;

/// The sign-in method retried when the server requires authentication.
pub(crate) const AUTH_METHOD: &str = "oauth-personal";
/// The session config option that selects the model.
const MODEL_OPTION: &str = "model";

/// Runs the handshake and returns the ready session's id.
pub(crate) async fn open_session(
    cx: &ConnectionTo<Agent>,
    cwd: &Path,
    mcp_servers: Vec<McpServer>,
    model: Option<&str>,
    sign_in: SignIn,
) -> Result<SessionId, AdapterError> {
    let init = cx
        .send_request(
            InitializeRequest::new(ProtocolVersion::V1)
                .client_capabilities(ClientCapabilities::new())
                .client_info(Implementation::new(ADAPTER_ID, env!("CARGO_PKG_VERSION"))),
        )
        .block_task()
        .await
        .map_err(|e| AdapterError::remote("initialize", &e))?;
    let new_session = NewSessionRequest::new(cwd).mcp_servers(mcp_servers);
    let session = match cx.send_request(new_session.clone()).block_task().await {
        Ok(session) => session,
        Err(error) if error.code == ErrorCode::AUTH_REQUIRED => {
            let offered = init
                .auth_methods
                .iter()
                .any(|method| method.id().to_string() == AUTH_METHOD);
            if !offered {
                return Err(AdapterError::AuthRequired(SignInProblem::NotCompleted));
            }
            if !sign_in.browser {
                return Err(AdapterError::AuthRequired(SignInProblem::NoBrowser));
            }
            sign_in.announce();
            let authenticated = tokio::time::timeout(
                sign_in.timeout,
                cx.send_request(AuthenticateRequest::new(AUTH_METHOD))
                    .block_task(),
            )
            .await
            .map_err(|_| {
                AdapterError::AuthRequired(SignInProblem::TimedOut(sign_in.timeout.as_secs()))
            })?;
            authenticated.map_err(|e| auth_error("authenticate", &e))?;
            cx.send_request(new_session)
                .block_task()
                .await
                .map_err(|e| auth_error("session/new", &e))?
        }
        Err(error) => return Err(AdapterError::remote("session/new", &error)),
    };
    if let Some(model) = model {
        select_model(cx, &session, model).await?;
    }
    Ok(session.session_id)
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

async fn select_model(
    cx: &ConnectionTo<Agent>,
    session: &NewSessionResponse,
    model: &str,
) -> Result<(), AdapterError> {
    let offered = session
        .config_options
        .iter()
        .flatten()
        .any(|option| option.id.to_string() == MODEL_OPTION && offers(option, model));
    if !offered {
        return Err(AdapterError::ModelUnavailable(model.to_owned()));
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
