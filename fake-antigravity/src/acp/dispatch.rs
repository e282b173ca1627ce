//! Routing ACP messages to the fake's methods, on the official SDK (role Agent, v1).
//!
//! One catch-all request handler and one catch-all notification handler take every
//! message as untyped JSON, so the fake validates params and shapes its answers exactly
//! like the real server (pydantic-style -32602, -32601 with `data.method`) instead of the
//! SDK's typed defaults. Only `session/prompt` does long work; it runs in a task spawned
//! on the connection, so the dispatch loop keeps reading (permission answers, cancels).

use std::sync::Arc;

use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Agent, Client, ConnectTo, Error, UntypedMessage, on_receive_notification, on_receive_request,
};
use serde_json::Value;

use crate::acp::auth_methods::{Authenticated, authenticate, authenticate_fully, logout};
use crate::acp::catalogue::{AGENT_NAME, available_commands_update, initialize_result};
use crate::acp::config_methods::{set_config_option, set_mode, set_model};
use crate::acp::late_permission::ask_late_permission;
use crate::acp::params::ParamReader;
use crate::acp::rpc_errors::method_not_found;
use crate::acp::session_methods::{
    Opened, close_session, list_sessions, new_session, reopen_session,
};
use crate::acp::session_updates::send_update;
use crate::state::fake_agent::FakeAgent;
use crate::turn::prompt_turn::run_prompt;

/// Serves `agent` on `transport` until the client closes its side.
pub async fn serve_connection(
    agent: Arc<FakeAgent>,
    transport: impl ConnectTo<Agent> + 'static,
) -> Result<(), Error> {
    let for_requests = agent.clone();
    let for_notifications = agent;
    Agent
        .v1()
        .name(AGENT_NAME)
        .on_receive_request(
            async move |request: UntypedMessage,
                        responder: Responder<Value>,
                        cx: ConnectionTo<Client>| {
                let agent = for_requests.clone();
                let latency = agent.script.latency_ms.before(&request.method);
                if latency.is_zero() {
                    return handle_request(agent, request, responder, cx);
                }
                // `latency_ms`: wait off the dispatch loop, which keeps reading.
                let task_cx = cx.clone();
                cx.spawn(async move {
                    tokio::time::sleep(latency).await;
                    handle_request(agent, request, responder, task_cx)
                })
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: UntypedMessage, _cx: ConnectionTo<Client>| {
                handle_notification(&for_notifications, &notification);
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_to(transport)
        .await
}

fn reply(responder: Responder<Value>, answer: Result<Value, Error>) -> Result<(), Error> {
    match answer {
        Ok(result) => responder.respond(result),
        Err(error) => responder.respond_with_error(error),
    }
}

fn handle_request(
    agent: Arc<FakeAgent>,
    request: UntypedMessage,
    responder: Responder<Value>,
    cx: ConnectionTo<Client>,
) -> Result<(), Error> {
    let (method, params) = request.into_parts();
    agent
        .log
        .debug("server.py:90", &format!("request {method}"));
    match method.as_str() {
        "initialize" => {
            let asked = params.get("protocolVersion").cloned().unwrap_or_default();
            if asked != 1 {
                agent.log.warning(
                    "server.py:90",
                    &format!("initialize: the client asked for protocolVersion {asked}, not 1"),
                );
            }
            let mut result = initialize_result(agent.script.initialize.protocol_version);
            if let (Some(wanted), Some(methods)) = (
                &agent.script.initialize.auth_methods,
                result.get_mut("authMethods").and_then(Value::as_array_mut),
            ) {
                methods.retain(|method| {
                    method
                        .get("id")
                        .and_then(Value::as_str)
                        .is_some_and(|id| wanted.iter().any(|w| w == id))
                });
            }
            if let (Some(name), Some(info)) = (
                &agent.script.initialize.agent_name,
                result.get_mut("agentInfo").and_then(Value::as_object_mut),
            ) {
                info.insert("name".to_owned(), Value::from(name.as_str()));
            }
            if !agent.script.initialize.logout
                && let Some(capabilities) = result
                    .pointer_mut("/agentCapabilities")
                    .and_then(Value::as_object_mut)
            {
                capabilities.remove("auth");
            }
            if agent.script.session_close.advertise
                && let Some(capabilities) = result
                    .pointer_mut("/agentCapabilities/sessionCapabilities")
                    .and_then(Value::as_object_mut)
            {
                capabilities.insert("close".to_owned(), serde_json::json!({}));
            }
            responder.respond(result)
        }
        "authenticate" => match authenticate(&agent, &params) {
            Authenticated::Now(answer) => reply(responder, answer),
            // The browser flow holds the request for minutes: never in the dispatch loop.
            Authenticated::BrowserFlow => {
                cx.spawn(async move { reply(responder, authenticate_fully(&agent, &params).await) })
            }
        },
        "logout" if agent.script.initialize.logout => responder.respond(logout(&agent)),
        "session/new" => {
            if let Some(code) = agent.script.session_new.error_code {
                return responder.respond_with_error(Error::new(code, "Internal error"));
            }
            let late = agent.script.session_new.late_permission.clone();
            match (late, agent.sessions.last_prompted()) {
                // The late request is answered through the dispatch loop: never wait in it.
                (Some(tool), Some(finished)) => {
                    let task_cx = cx.clone();
                    cx.spawn(async move {
                        ask_late_permission(&agent, &task_cx, &finished, &tool).await;
                        opened(new_session(&agent, &params), responder, &task_cx)
                    })
                }
                _ => opened(new_session(&agent, &params), responder, &cx),
            }
        }
        "session/load" => opened(reopen_session(&agent, &params, true), responder, &cx),
        "session/resume" => opened(reopen_session(&agent, &params, false), responder, &cx),
        "session/list" => responder.respond(list_sessions()),
        "session/close" => match agent.script.session_close.late_permission.clone() {
            // The late request is answered through the dispatch loop: never wait in it.
            Some(tool) => {
                let task_cx = cx.clone();
                cx.spawn(async move {
                    let session = params.get("sessionId").and_then(Value::as_str);
                    let session = session.unwrap_or_default().to_owned();
                    ask_late_permission(&agent, &task_cx, &session, &tool).await;
                    reply(responder, close_session(&agent, &params))
                })
            }
            None => reply(responder, close_session(&agent, &params)),
        },
        "session/set_config_option" => reply(responder, set_config_option(&agent, &params)),
        "session/set_mode" => reply(responder, set_mode(&agent, &params)),
        "session/set_model" => reply(responder, set_model(&agent, &params)),
        "session/prompt" => {
            let task_cx = cx.clone();
            cx.spawn(async move {
                run_prompt(agent, task_cx, params, responder).await;
                Ok(())
            })
        }
        // `session/cancel` is a notification; sent as a request it is unknown, like the
        // Python SDK server answers it.
        _ => responder.respond_with_error(method_not_found(&method)),
    }
}

/// Answers a session that opened: replay first, then the response, then the available
/// commands (docs/antigravity-1.3.0.md §6: strictly after the response).
fn opened(
    answer: Result<Opened, Error>,
    responder: Responder<Value>,
    cx: &ConnectionTo<Client>,
) -> Result<(), Error> {
    let opened = match answer {
        Ok(opened) => opened,
        Err(error) => return responder.respond_with_error(error),
    };
    for update in opened.replay {
        send_update(cx, &opened.session_id, update)?;
    }
    responder.respond(opened.body)?;
    send_update(cx, &opened.session_id, available_commands_update())
}

fn handle_notification(agent: &FakeAgent, notification: &UntypedMessage) {
    let method = notification.method();
    agent
        .log
        .debug("server.py:95", &format!("notification {method}"));
    if method != "session/cancel" {
        return;
    }
    let params = notification.params();
    let mut reader = ParamReader::new(params);
    let Some(session_id) = reader.required_str("sessionId") else {
        agent.log.warning(
            "server.py:97",
            "session/cancel without a sessionId, ignored",
        );
        return;
    };
    let cancelled = agent.sessions.cancel_prompts(session_id);
    agent.log.info(
        "server.py:99",
        &format!("session/cancel for {session_id}: {cancelled} running prompt(s) cancelled"),
    );
}
