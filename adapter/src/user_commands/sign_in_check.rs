//! The sign-in check of `doctor` and `status`: a server started as the adapter starts one
//! ([`Probe`]), `initialize`, then one `session/new` that is never prompted (its files go
//! with the process). A session that opens means signed in; "authentication required"
//! means a sign-in is needed, with the methods the server offers and the command that signs
//! in; any other failure is reported by its code. It never signs in itself, so no browser
//! opens: `login` does that.

use crate::config::{AdapterConfig, AuthMethod};
use crate::contract::{LlmError, LlmErrorCode};
use crate::server::{SettledMethod, settled_method};

use super::probe::{Probe, SessionOutcome};
use super::report::{Check, CheckStatus};

/// Starts a server, opens one session, disposes of it; how that went.
pub(crate) async fn sign_in_check(config: &AdapterConfig) -> Check {
    let mut probe = match Probe::start(config).await {
        Ok(probe) => probe,
        Err(error) => return not_started(&error),
    };
    let opened = probe.open_session().await;
    let methods = probe.methods();
    let settled = probe.home().map_or(SettledMethod::None, settled_method);
    probe.dispose().await;
    match opened {
        Ok(SessionOutcome::Opened) => Check::new(
            "signIn",
            CheckStatus::Ok,
            "signed in",
            "signed in: a session opened (never prompted; its files were removed)",
        ),
        Ok(SessionOutcome::SignInNeeded) => sign_in_needed(config.auth_method, &methods, settled),
        Err(error) => Check::new(
            "signIn",
            CheckStatus::Fail,
            error.code.as_str(),
            format!(
                "session/new failed ({}): {}",
                error.code.as_str(),
                error.message
            ),
        ),
    }
}

/// "Authentication required": a browser method needs `login`; a key method is signed in
/// by the adapter at its first session (so only a warning).
fn sign_in_needed(configured: AuthMethod, methods: &[String], settled: SettledMethod) -> Check {
    let offered = if methods.is_empty() {
        "none".to_owned()
    } else {
        methods.join(", ")
    };
    let set_up = match settled {
        SettledMethod::Known(method) => format!("; its settings.json names {method}"),
        SettledMethod::Other => {
            "; its settings.json names a method this adapter does not know".to_owned()
        }
        SettledMethod::None => String::new(),
    };
    let detail = format!(
        "sign-in needed: the server asks for one (it offers {offered}{set_up}); authMethod is \
         {configured}"
    );
    let login = format!("antigravity-acp-dsh login --method {configured}");
    if !methods.iter().any(|m| m == configured.as_str()) {
        return Check::new("signIn", CheckStatus::Fail, "sign-in needed", detail).fix(format!(
            "set authMethod to a method the server offers ({offered}), then run antigravity-acp-dsh login"
        ));
    }
    if configured.needs_browser() {
        return Check::new("signIn", CheckStatus::Fail, "sign-in needed", detail).fix(login);
    }
    Check::new(
        "signIn",
        CheckStatus::Warn,
        "not signed in yet",
        format!(
            "{detail}: the adapter signs in with it at its first session, given {}",
            configured.needs()
        ),
    )
    .fix(format!("{login} (signs in now)"))
}

/// The server did not start: its code, the adapter's message, and a fix by code.
fn not_started(error: &LlmError) -> Check {
    let code = error.code.as_str();
    let check = Check::new(
        "signIn",
        CheckStatus::Fail,
        format!("server did not start ({code})"),
        format!("the server did not start ({code}): {}", error.message),
    );
    let fix = match error.code {
        LlmErrorCode::AcpBinaryMissing | LlmErrorCode::AcpSpawnFailed => {
            "check the server command (server.command), or leave it out to use the pinned build"
        }
        LlmErrorCode::AcpDisconnected => {
            "the server exited as it started: run its command by hand to see why"
        }
        LlmErrorCode::AcpConfinementUnavailable => "set confinement to best_effort",
        LlmErrorCode::AcpInstallFailed | LlmErrorCode::AcpPlatformUnsupported => {
            "antigravity-acp-dsh doctor --install"
        }
        LlmErrorCode::AcpVersionMismatch => "use the pinned server (leave server.command out)",
        _ => return check,
    };
    check.fix(fix)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each start failure gets its own fix; a failure with none gets none.
    #[test]
    fn a_server_that_did_not_start_gets_the_fix_for_its_code() {
        let fix_for = |code| not_started(&LlmError::new(code, "what happened")).fix;
        for (code, fix) in [
            (LlmErrorCode::AcpBinaryMissing, "check the server command"),
            (LlmErrorCode::AcpSpawnFailed, "check the server command"),
            (LlmErrorCode::AcpDisconnected, "run its command by hand"),
            (LlmErrorCode::AcpConfinementUnavailable, "best_effort"),
            (LlmErrorCode::AcpInstallFailed, "doctor --install"),
            (LlmErrorCode::AcpPlatformUnsupported, "doctor --install"),
            (LlmErrorCode::AcpVersionMismatch, "use the pinned server"),
        ] {
            let found = fix_for(code);
            assert!(
                found.as_deref().is_some_and(|f| f.contains(fix)),
                "{code:?}: {found:?}"
            );
        }
        assert_eq!(fix_for(LlmErrorCode::AcpTimeout), None);
        let check = not_started(&LlmError::new(LlmErrorCode::AcpSpawnFailed, "no such file"));
        assert_eq!(check.status, CheckStatus::Fail);
        assert_eq!(check.brief, "server did not start (ACP_SPAWN_FAILED)");
        assert!(check.detail.ends_with(": no such file"), "{}", check.detail);
    }

    #[test]
    fn a_needed_sign_in_names_the_methods_and_the_fix() {
        let methods = vec!["oauth-personal".to_owned(), "gemini-api-key".to_owned()];
        let browser = sign_in_needed(AuthMethod::OauthPersonal, &methods, SettledMethod::None);
        assert_eq!(browser.status, CheckStatus::Fail);
        assert!(
            browser.detail.contains("oauth-personal, gemini-api-key"),
            "{}",
            browser.detail
        );
        assert_eq!(
            browser.fix.as_deref(),
            Some("antigravity-acp-dsh login --method oauth-personal")
        );
        let key = sign_in_needed(
            AuthMethod::GeminiApiKey,
            &methods,
            SettledMethod::Known(AuthMethod::GeminiApiKey),
        );
        assert_eq!(key.status, CheckStatus::Warn);
        assert!(key.detail.contains("GEMINI_API_KEY"), "{}", key.detail);
        assert!(
            key.detail.contains("settings.json names gemini-api-key"),
            "{}",
            key.detail
        );
        let not_offered = sign_in_needed(AuthMethod::OauthBusiness, &methods, SettledMethod::None);
        assert_eq!(not_offered.status, CheckStatus::Fail);
        assert!(
            not_offered
                .fix
                .as_deref()
                .is_some_and(|f| f.contains("set authMethod"))
        );
    }

    #[test]
    fn a_server_that_did_not_start_is_reported_by_its_code() {
        let gone = LlmError::new(
            LlmErrorCode::AcpDisconnected,
            "the server connection closed",
        );
        let check = not_started(&gone);
        assert_eq!(check.status, CheckStatus::Fail);
        assert!(
            check.detail.contains("ACP_DISCONNECTED"),
            "{}",
            check.detail
        );
        assert!(check.fix.is_some());
    }
}
