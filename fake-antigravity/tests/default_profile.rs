//! The default profile (no script) over real stdio with an ACP SDK client: the exact
//! 1.3.0 `initialize` body, the `session/new` shape, `available_commands_update`, and an
//! echoed prompt; plus config changes and the error shapes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use agent_client_protocol::v1::schema::{InitializeResponse, NewSessionResponse};
use agent_client_protocol::{ErrorCode, v1::schema::SessionNotification};
use serde_json::json;
use support::start_fake;

#[tokio::test]
async fn initialize_session_new_and_echo_follow_the_1_3_0_wire() {
    let journal = tempfile::tempdir().unwrap();
    let args = vec![
        "--uid=".to_string(),
        "--journal".to_string(),
        journal.path().display().to_string(),
    ];
    let mut fake = start_fake(&args, &[]).await;

    let init = fake
        .request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false}}),
        )
        .await
        .unwrap();
    assert_eq!(
        init,
        json!({
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": true,
                "promptCapabilities": {"image": true, "audio": true, "embeddedContext": true},
                "mcpCapabilities": {"http": true, "sse": true},
                "sessionCapabilities": {"list": {}, "resume": {}},
                "auth": {"logout": {}}
            },
            "authMethods": [
                {"description": "Log in with your Google account", "id": "oauth-personal", "name": "Log in with Google"},
                {"description": "Log in with your Gemini Enterprise account", "id": "oauth-business", "name": "Log in with Gemini Enterprise"},
                {"description": "Use an API key with Gemini Developer API", "id": "gemini-api-key", "name": "Gemini API key"},
                {"description": "Use Gemini Enterprise Agent Platform (formerly Vertex AI) with Application Default Credentials or an API key", "id": "agent-platform", "name": "Gemini Enterprise Agent Platform"}
            ],
            "agentInfo": {"name": "antigravity-acp", "title": "Google Antigravity", "version": "1.3.0"}
        })
    );
    // The SDK's typed client reads it too.
    let typed: InitializeResponse = serde_json::from_value(init).unwrap();
    assert_eq!(typed.auth_methods.len(), 4);

    let opened = fake
        .request("session/new", json!({"cwd": "/tmp", "mcpServers": []}))
        .await
        .unwrap();
    let session_id = opened["sessionId"].as_str().unwrap().to_string();
    assert_eq!(
        uuid::Uuid::parse_str(&session_id)
            .unwrap()
            .get_version_num(),
        4
    );
    assert_eq!(opened["modes"]["currentModeId"], "default");
    assert_eq!(
        opened["modes"]["availableModes"].as_array().unwrap().len(),
        3
    );
    assert_eq!(opened["models"]["currentModelId"], "gemini-3.8-flash-high");
    let models = opened["models"]["availableModels"].as_array().unwrap();
    let ids: Vec<&str> = models
        .iter()
        .map(|m| m["modelId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "gemini-3.8-flash-high",
            "gemini-3.8-flash-medium",
            "gemini-3.8-flash-low",
            "gemini-3.7-flash-high",
            "gemini-3.7-flash-medium",
            "gemini-3.7-flash-low",
            "gemini-3.6-flash-high",
            "gemini-3.6-flash-medium",
            "gemini-3.6-flash-low",
            "gemini-pro-agent",
            "gemini-3.1-pro-low"
        ]
    );
    assert_eq!(
        models[9],
        json!({"modelId": "gemini-pro-agent", "name": "Gemini 3.1 Pro (High)", "description": "gemini-pro-agent"})
    );
    let options = opened["configOptions"].as_array().unwrap();
    assert_eq!(options[0]["id"], "model");
    assert_eq!(options[0]["category"], "model");
    assert_eq!(options[0]["type"], "select");
    assert_eq!(options[0]["currentValue"], "gemini-3.8-flash-high");
    assert_eq!(options[1]["id"], "mode");
    assert_eq!(options[1]["name"], "Session Mode");
    let typed: NewSessionResponse = serde_json::from_value(opened.clone()).unwrap();
    assert_eq!(typed.config_options.map(|o| o.len()), Some(2));

    let (method, params) = fake.next_notification().await;
    assert_eq!(method, "session/update");
    assert_eq!(params["sessionId"], session_id.as_str());
    assert_eq!(
        params["update"],
        json!({
            "availableCommands": [
                {"name": "plan", "description": "Plan carefully before executing a task (generates an implementation plan artifact and awaits user approval)."},
                {"name": "logout", "description": "Log out and clear stored credentials."}
            ],
            "sessionUpdate": "available_commands_update"
        })
    );
    serde_json::from_value::<SessionNotification>(params).unwrap();

    let answer = fake
        .request(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "hello "}, {"type": "text", "text": "fake"}]}),
        )
        .await
        .unwrap();
    assert_eq!(answer, json!({"stopReason": "end_turn"}));
    let update = fake.next_update().await;
    assert_eq!(
        update,
        json!({"content": {"text": "hello fake", "type": "text"}, "sessionUpdate": "agent_message_chunk"})
    );

    assert!(fake.close().await.success());
    let journal = fake_antigravity::journal::read_dir(journal.path()).unwrap();
    assert_eq!(journal.len(), 1);
    let entries = &journal[0];
    assert!(matches!(
        &entries[0],
        fake_antigravity::JournalEntry::Started { args, .. } if args[0] == "--uid="
    ));
    assert_eq!(
        entries.last(),
        Some(&fake_antigravity::JournalEntry::Exited {
            reason: "stdin closed".into()
        })
    );
}

#[tokio::test]
async fn config_changes_answer_the_updated_options() {
    let mut fake = start_fake(&[], &[]).await;
    let session_id = fake.new_session(json!([])).await;
    let changed = fake
        .request(
            "session/set_config_option",
            json!({"sessionId": session_id, "configId": "model", "value": "gemini-3.1-pro-low"}),
        )
        .await
        .unwrap();
    assert_eq!(
        changed["configOptions"][0]["currentValue"],
        "gemini-3.1-pro-low"
    );
    assert_eq!(changed["configOptions"][1]["currentValue"], "default");
    let set_mode = fake
        .request(
            "session/set_mode",
            json!({"sessionId": session_id, "modeId": "yolo"}),
        )
        .await
        .unwrap();
    assert_eq!(set_mode, json!({}));
    let set_model = fake
        .request(
            "session/set_model",
            json!({"sessionId": session_id, "modelId": "gemini-3.8-flash-low"}),
        )
        .await
        .unwrap();
    assert_eq!(set_model, json!({}));
    assert!(fake.close().await.success());
}

#[tokio::test]
async fn invalid_config_params_are_refused_in_the_1_3_0_shape() {
    let mut fake = start_fake(&[], &[]).await;
    let session_id = fake.new_session(json!([])).await;
    let refused = fake
        .request(
            "session/set_config_option",
            json!({"sessionId": session_id, "configId": "model", "value": "gpt-9"}),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
    let misnamed = fake
        .request(
            "session/set_config_option",
            json!({"sessionId": session_id, "configOptionId": "model", "value": "x"}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        misnamed.data,
        Some(
            json!({"errors": [{"loc": ["configId"], "msg": "field required", "type": "value_error.missing"}]})
        )
    );
    assert!(fake.close().await.success());
}

#[tokio::test]
async fn unknown_methods_are_not_found() {
    let mut fake = start_fake(&[], &[]).await;
    let session_id = fake.new_session(json!([])).await;
    let unknown = fake.request("newSession", json!({})).await.unwrap_err();
    assert_eq!(unknown.code, ErrorCode::METHOD_NOT_FOUND);
    assert_eq!(unknown.data, Some(json!({"method": "newSession"})));
    // A notification method sent as a request is unknown too, as on RC01.
    let cancel_as_request = fake
        .request("session/cancel", json!({"sessionId": session_id}))
        .await
        .unwrap_err();
    assert_eq!(cancel_as_request.code, ErrorCode::METHOD_NOT_FOUND);
    assert_eq!(
        cancel_as_request.data,
        Some(json!({"method": "session/cancel"}))
    );
    assert!(fake.close().await.success());
}

#[tokio::test]
async fn session_list_answers_without_sessions() {
    let fake = start_fake(&[], &[]).await;
    assert_eq!(
        fake.request("session/list", json!({})).await.unwrap(),
        json!({"sessions": []})
    );
    assert!(fake.close().await.success());
}
