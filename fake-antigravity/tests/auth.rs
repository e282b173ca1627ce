//! Sign-in per `script.auth`, over real stdio: `required` answers -32000 until
//! `authenticate(oauth-personal)`; `refused` fails authenticate with "Onboarding failed";
//! a missing or unknown method id is -32602 with `data.errors[].loc`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use agent_client_protocol::ErrorCode;
use serde_json::json;
use support::{script_args, start_fake, write_script};

#[tokio::test]
async fn required_auth_refuses_sessions_until_authenticate() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(dir.path(), "auth: required\n");
    let gemini_home = dir.path().join("gemini-home");
    let home = gemini_home.display().to_string();
    let mut fake = start_fake(
        &script_args(&script, &dir.path().join("journal")),
        &[("GEMINI_HOME", home.as_str())],
    )
    .await;
    fake.request("initialize", json!({"protocolVersion": 1}))
        .await
        .unwrap();

    let new_session = json!({"cwd": "/tmp", "mcpServers": []});
    let refused = fake
        .request("session/new", new_session.clone())
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::AUTH_REQUIRED);
    assert_eq!(refused.message, "Authentication required");
    let message = refused.data.as_ref().unwrap()["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "No authentication method selected. Either call the `authenticate` method"
        ),
        "{message}"
    );
    let settings = gemini_home.join("antigravity-acp").join("settings.json");
    assert!(
        message.contains(&settings.display().to_string()),
        "{message}"
    );

    let missing = fake
        .request("authenticate", json!({"method": "oauth-personal"}))
        .await
        .unwrap_err();
    assert_eq!(missing.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        missing.data,
        Some(
            json!({"errors": [{"loc": ["methodId"], "msg": "field required", "type": "value_error.missing"}]})
        )
    );
    let unknown = fake
        .request("authenticate", json!({"methodId": "password"}))
        .await
        .unwrap_err();
    assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        unknown.data.as_ref().unwrap()["errors"][0]["loc"],
        json!(["methodId"])
    );

    let signed_in = fake
        .request("authenticate", json!({"methodId": "oauth-personal"}))
        .await
        .unwrap();
    assert_eq!(signed_in, json!({}));
    let session_id = fake.new_session(json!([])).await;
    assert!(!session_id.is_empty());
    assert!(fake.close().await.success());
}

#[tokio::test]
async fn refused_auth_fails_onboarding() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_script(dir.path(), "{\"auth\": \"refused\"}\n");
    let fake = start_fake(&script_args(&script, &dir.path().join("journal")), &[]).await;
    let failed = fake
        .request("authenticate", json!({"methodId": "oauth-personal"}))
        .await
        .unwrap_err();
    assert_eq!(failed.code, ErrorCode::AUTH_REQUIRED);
    assert_eq!(
        failed.message,
        "Onboarding failed: The authentication flow did not complete successfully."
    );
    assert_eq!(failed.data, Some(json!({"reason": "onboarding_failed"})));
    let still_refused = fake
        .request("session/new", json!({"cwd": "/tmp", "mcpServers": []}))
        .await
        .unwrap_err();
    assert_eq!(still_refused.code, ErrorCode::AUTH_REQUIRED);
    assert!(fake.close().await.success());
}
