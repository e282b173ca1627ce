//! `antigravity-acp-dsh logout`: ACP `logout` to a server started as the adapter starts one
//! ([`Probe`]), sent only when its `initialize` advertised it
//! (`agentCapabilities.auth.logout`; 1.3.0 does). A server that does not advertise it is
//! sent nothing, and the command says so and fails.

use serde::Serialize;

use crate::config::AdapterConfig;
use crate::contract::{LlmError, LlmErrorCode};

use super::probe::Probe;
use super::report::{CommandOutput, EXIT_FAILED, EXIT_OK};

/// How the logout came out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogoutReport {
    /// `logout`.
    pub command: &'static str,
    /// Whether the server advertised `logout` (`None`: it did not start).
    pub advertised: Option<bool>,
    /// Whether the server signed out.
    pub signed_out: bool,
    /// What went wrong: a code and the adapter's message.
    pub error: Option<LlmError>,
    /// The exit code.
    pub exit_code: i32,
}

/// Starts the server and logs out, if it offers to.
pub async fn logout(config: AdapterConfig) -> CommandOutput {
    let probe = match Probe::start(&config).await {
        Ok(probe) => probe,
        Err(error) => return output(None, Some(error)),
    };
    let advertised = probe.logs_out();
    let sent = if advertised {
        probe.logout().await.err()
    } else {
        Some(LlmError::new(
            LlmErrorCode::AcpRpcError,
            "the server does not advertise logout (agentCapabilities.auth.logout): nothing was \
             sent and nothing changed; sign out the way the server itself offers",
        ))
    };
    probe.dispose().await;
    output(Some(advertised), sent)
}

fn output(advertised: Option<bool>, error: Option<LlmError>) -> CommandOutput {
    let signed_out = error.is_none();
    let exit_code = if signed_out { EXIT_OK } else { EXIT_FAILED };
    let text = match &error {
        None => "signed out: the server cleared its stored sign-in\n".to_owned(),
        Some(error) => format!(
            "not signed out ({}): {}\n",
            error.code.as_str(),
            error.message
        ),
    };
    let report = LogoutReport {
        command: "logout",
        advertised,
        signed_out,
        error,
        exit_code,
    };
    CommandOutput::new(&report, text, exit_code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_logout_fails_with_its_reason() {
        let refused = output(
            Some(false),
            Some(LlmError::new(LlmErrorCode::AcpRpcError, "not advertised")),
        );
        assert_eq!(refused.exit_code, EXIT_FAILED);
        assert_eq!(refused.report["advertised"], false);
        assert_eq!(refused.report["error"]["code"], "ACP_RPC_ERROR");
        let done = output(Some(true), None);
        assert_eq!(done.exit_code, EXIT_OK);
        assert_eq!(done.report["signedOut"], true);
        assert!(done.text.starts_with("signed out"));
    }
}
