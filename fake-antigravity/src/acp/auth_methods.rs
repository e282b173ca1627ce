//! `authenticate` and `logout` (docs/antigravity-1.3.0.md §5): the sign-in state follows `script.auth`.
//! `signed-in` starts signed in; `required` and `from-home` (signed out) sign in on any
//! valid method: at once, or through the browser flow when `sign_in.flow` is `browser`
//! (see [`crate::acp::browser_sign_in`]); `refused` fails every `authenticate` with
//! "Onboarding failed".
//!
//! With `$GEMINI_HOME` set, a successful sign-in also writes `auth.type` = the method id
//! into `settings.json`, and signing out ([`sign_out`], shared by `logout` and the
//! `/logout` slash command) deletes the token and removes `auth.type`, as 1.3.0 does; each
//! write of `settings.json` is journaled (`settings_written`).

use agent_client_protocol::Error;
use serde_json::{Value, json};

use crate::acp::catalogue::AUTH_METHOD_IDS;
use crate::acp::params::ParamReader;
use crate::acp::rpc_errors::{ParamProblem, invalid_params_message, onboarding_failed};
use crate::journal::JournalEntry;
use crate::script::{AuthScript, SignInFlow};
use crate::state::fake_agent::FakeAgent;

/// `agent-platform`'s former id, which 1.3.0 still accepts.
const LEGACY_VERTEX_ID: &str = "vertex-ai";

/// What `authenticate` comes to.
#[derive(Debug)]
pub enum Authenticated {
    /// Answered at once.
    Now(Result<Value, Error>),
    /// The browser flow must run first (it may take minutes: run it in a task).
    BrowserFlow,
}

/// `authenticate {methodId}`, at once or after the browser flow.
pub async fn authenticate_fully(agent: &FakeAgent, params: &Value) -> Result<Value, Error> {
    match authenticate(agent, params) {
        Authenticated::Now(answer) => answer,
        Authenticated::BrowserFlow => {
            let sign_in = agent.script.sign_in;
            let wait = std::time::Duration::from_millis(sign_in.wait_ms);
            let stdout = sign_in.url_on_stdout.then_some(&agent.stdout_lines);
            crate::acp::browser_sign_in::browser_flow(
                agent.log,
                wait,
                sign_in.browser_completes,
                stdout,
            )
            .await?;
            let method = params.get("methodId").and_then(Value::as_str);
            signed_in_with(agent, method.unwrap_or_default());
            Ok(json!({}))
        }
    }
}

/// `authenticate {methodId}`.
pub fn authenticate(agent: &FakeAgent, params: &Value) -> Authenticated {
    match authenticate_now(agent, params) {
        Ok(None) => Authenticated::BrowserFlow,
        Ok(Some(answer)) => Authenticated::Now(Ok(answer)),
        Err(error) => Authenticated::Now(Err(error)),
    }
}

/// `Ok(None)`: the browser flow must run.
fn authenticate_now(agent: &FakeAgent, params: &Value) -> Result<Option<Value>, Error> {
    let mut reader = ParamReader::new(params);
    let method = reader.required_str("methodId");
    if let Some(method) = method
        && !AUTH_METHOD_IDS.contains(&method)
        && method != LEGACY_VERTEX_ID
    {
        reader.problem(ParamProblem::bad_value(
            vec![json!("methodId")],
            format!(
                "unknown authentication method `{method}`; expected one of: {}",
                AUTH_METHOD_IDS.join(", ")
            ),
        ));
    }
    reader.finish()?;
    let method = method.unwrap_or_default();
    if method == "gemini-api-key" && std::env::var_os("GEMINI_API_KEY").is_none_or(|v| v.is_empty())
    {
        return Err(invalid_params_message(
            "The GEMINI_API_KEY environment variable must be set in the environment the ACP \
             server is launched from for Gemini API Key authentication.",
        ));
    }
    if agent.script.auth == AuthScript::Refused {
        agent.log.warning(
            "credential_manager.py:553",
            "Credentials missing or invalid. Launching browser login flow...",
        );
        agent.log.error(
            "credential_manager.py:590",
            "fake-antigravity: the scripted sign-in flow is refused",
        );
        return Err(onboarding_failed());
    }
    if agent.script.auth == AuthScript::NeverSatisfied {
        agent.log.info(
            "credential_manager.py:601",
            "fake-antigravity: authenticate answered, the sign-in is scripted to never hold",
        );
        return Ok(Some(json!({})));
    }
    if !agent.is_signed_in()
        && method.starts_with("oauth-")
        && agent.script.sign_in.flow == SignInFlow::Browser
    {
        return Ok(None);
    }
    if !agent.is_signed_in() && method.starts_with("oauth-") {
        agent.log.info(
            "credential_manager.py:553",
            "Credentials missing or invalid. Launching browser login flow...",
        );
        agent.log.info(
            "credential_manager.py:560",
            "fake-antigravity: the scripted sign-in flow completes at once",
        );
    }
    signed_in_with(agent, method);
    Ok(Some(json!({})))
}

/// A sign-in with `method` succeeded: sessions may open, and the home's `settings.json`
/// says so (journaled), as 1.3.0 writes it.
fn signed_in_with(agent: &FakeAgent, method: &str) {
    agent.set_signed_in(true);
    let Some(stored) = agent.stored_credentials() else {
        return;
    };
    match stored.write_auth_type(method) {
        Ok(()) => agent.record(JournalEntry::SettingsWritten {
            auth_type: Some(method.to_owned()),
            by: "authenticate".to_owned(),
        }),
        Err(error) => agent.log.warning(
            "settings.py:310",
            &format!("could not record the sign-in method: {error}"),
        ),
    }
}

/// `logout {}`: signs out, clearing the stored credentials.
pub fn logout(agent: &FakeAgent) -> Value {
    sign_out(agent, "logout");
    json!({})
}

/// Signs out as `logout` does; `by` names what asked (`logout`, `/logout`) in the
/// journal. With a writable home the token is deleted and `auth.type` removed from
/// `settings.json` (journaled when the file was written); a failure is logged, not
/// answered.
pub fn sign_out(agent: &FakeAgent, by: &str) {
    agent.set_signed_in(false);
    let Some(stored) = agent.stored_credentials() else {
        return;
    };
    match stored.clear() {
        Ok(true) => agent.record(JournalEntry::SettingsWritten {
            auth_type: None,
            by: by.to_owned(),
        }),
        Ok(false) => {}
        Err(error) => agent.log.warning(
            "credential_manager.py:620",
            &format!("could not clear the stored credentials: {error}"),
        ),
    }
    agent.log.info("credential_manager.py:625", "Logged out");
}
