//! `settings.json` as 1.3.0 writes it (docs/antigravity-1.3.0.md §5), over real stdio: a
//! successful `authenticate` sets `auth.type` to the method id, keeping every other key;
//! `logout` deletes the token and removes `auth.type`; each write is journaled
//! (`settings_written`); a refused sign-in writes nothing, and nothing is written without
//! `GEMINI_HOME`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use fake_antigravity::JournalEntry;
use serde_json::{Value, json};
use support::{first_journal, script_args, start_fake, write_script};

fn settings(home: &Path) -> Value {
    let text = std::fs::read_to_string(home.join("antigravity-acp/settings.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn settings_writes(journal_dir: &Path) -> Vec<(Option<String>, String)> {
    first_journal(journal_dir)
        .into_iter()
        .filter_map(|entry| match entry {
            JournalEntry::SettingsWritten { auth_type, by } => Some((auth_type, by)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn authenticate_records_the_method_and_logout_resets_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let state = home.join("antigravity-acp");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("settings.json"), r#"{"telemetry":true}"#).unwrap();
    std::fs::write(state.join("acp_token.json"), r#"{"access_token":"x"}"#).unwrap();
    let script = write_script(dir.path(), "auth: required\n");
    let home_text = home.display().to_string();
    let journal = dir.path().join("journal");
    let fake = start_fake(
        &script_args(&script, &journal),
        &[("GEMINI_HOME", &home_text), ("GEMINI_API_KEY", "k")],
    )
    .await;

    let signed_in = fake
        .request("authenticate", json!({"methodId": "gemini-api-key"}))
        .await
        .unwrap();
    assert_eq!(signed_in, json!({}));
    assert_eq!(
        settings(&home),
        json!({"telemetry": true, "auth": {"type": "gemini-api-key"}})
    );
    fake.request("logout", json!({})).await.unwrap();
    assert_eq!(settings(&home), json!({"telemetry": true}));
    assert!(!state.join("acp_token.json").exists());
    // A second logout has no `auth.type` to remove: no write.
    fake.request("logout", json!({})).await.unwrap();
    assert!(fake.close().await.success());
    assert_eq!(
        settings_writes(&journal),
        [
            (Some("gemini-api-key".to_owned()), "authenticate".to_owned()),
            (None, "logout".to_owned()),
        ]
    );
}

#[tokio::test]
async fn an_oauth_sign_in_records_its_method_and_a_refused_one_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let home_text = home.display().to_string();
    let script = write_script(dir.path(), "auth: required\n");
    let journal = dir.path().join("journal");
    let fake = start_fake(
        &script_args(&script, &journal),
        &[("GEMINI_HOME", &home_text)],
    )
    .await;
    fake.request("authenticate", json!({"methodId": "oauth-personal"}))
        .await
        .unwrap();
    assert_eq!(settings(&home), json!({"auth": {"type": "oauth-personal"}}));
    assert!(fake.close().await.success());
    assert_eq!(
        settings_writes(&journal),
        [(Some("oauth-personal".to_owned()), "authenticate".to_owned())]
    );

    let refused_dir = tempfile::tempdir().unwrap();
    let home = refused_dir.path().join("home");
    let home_text = home.display().to_string();
    let script = write_script(refused_dir.path(), "auth: refused\n");
    let journal = refused_dir.path().join("journal");
    let fake = start_fake(
        &script_args(&script, &journal),
        &[("GEMINI_HOME", &home_text)],
    )
    .await;
    let refused = fake
        .request("authenticate", json!({"methodId": "oauth-personal"}))
        .await;
    assert!(refused.is_err());
    assert!(fake.close().await.success());
    assert!(!home.join("antigravity-acp/settings.json").exists());
    assert!(settings_writes(&journal).is_empty());
}

#[tokio::test]
async fn without_gemini_home_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let user_home = dir.path().join("user");
    std::fs::create_dir_all(&user_home).unwrap();
    let user_text = user_home.display().to_string();
    let script = write_script(dir.path(), "auth: required\n");
    let journal = dir.path().join("journal");
    let fake = start_fake(&script_args(&script, &journal), &[("HOME", &user_text)]).await;
    fake.request("authenticate", json!({"methodId": "oauth-personal"}))
        .await
        .unwrap();
    fake.request("logout", json!({})).await.unwrap();
    assert!(fake.close().await.success());
    assert!(
        !user_home.join(".gemini").exists(),
        "the real home untouched"
    );
    assert!(settings_writes(&journal).is_empty());
}

/// A home the server cannot write into (here `antigravity-acp` is a file): the sign-in
/// and the logout still succeed, the failure is logged, and nothing is journaled as
/// written.
#[tokio::test]
async fn an_unwritable_home_fails_no_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("antigravity-acp"), "not a folder").unwrap();
    let home_text = home.display().to_string();
    let script = write_script(dir.path(), "auth: required\n");
    let journal = dir.path().join("journal");
    let mut fake = start_fake(
        &script_args(&script, &journal),
        &[("GEMINI_HOME", &home_text)],
    )
    .await;
    let signed_in = fake
        .request("authenticate", json!({"methodId": "oauth-personal"}))
        .await
        .unwrap();
    assert_eq!(signed_in, json!({}));
    fake.new_session(json!([])).await;
    fake.request("logout", json!({})).await.unwrap();
    assert!(fake.close().await.success());
    assert!(settings_writes(&journal).is_empty());
}
