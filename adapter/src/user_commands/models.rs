//! `antigravity-acp-dsh models`: the model list DSH would see, from the provider's own
//! discovery ([`AntigravityProvider`]'s `list_models`: a server started, one session
//! opened, its catalogue read), then the provider disposed, so nothing it started stays.

use serde::Serialize;

use crate::AntigravityProvider;
use crate::config::AdapterConfig;
use crate::contract::{LlmAdapter, LlmError, LlmModelInfo};

use super::report::{CommandOutput, EXIT_FAILED, EXIT_OK};

/// The models, or why there are none.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelsReport {
    /// `models`.
    pub command: &'static str,
    /// DSH's model list for the provider route (`server-default` first).
    pub models: Vec<LlmModelInfo>,
    /// What went wrong: a code and the adapter's message.
    pub error: Option<LlmError>,
    /// The exit code.
    pub exit_code: i32,
}

/// Runs discovery and lists what it found.
pub async fn models(config: AdapterConfig) -> CommandOutput {
    let route = config.provider.clone();
    let provider = AntigravityProvider::new(config);
    let listed = provider.list_models(&route).await;
    provider.dispose().await;
    output(listed)
}

fn output(listed: Result<Vec<LlmModelInfo>, LlmError>) -> CommandOutput {
    let (models, error) = match listed {
        Ok(models) => (models, None),
        Err(error) => (Vec::new(), Some(error)),
    };
    let exit_code = if error.is_none() {
        EXIT_OK
    } else {
        EXIT_FAILED
    };
    let text = match &error {
        Some(error) => format!("no models ({}): {}\n", error.code.as_str(), error.message),
        None => {
            let width = models.iter().map(|m| m.id.len()).max().unwrap_or(0);
            models
                .iter()
                .map(|m| format!("{:<width$}  {}\n", m.id, m.name))
                .collect()
        }
    };
    let report = ModelsReport {
        command: "models",
        models,
        error,
        exit_code,
    };
    CommandOutput::new(&report, text, exit_code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::LlmErrorCode;

    #[test]
    fn models_print_one_a_line() {
        let model = |id: &str, name: &str| LlmModelInfo {
            provider: "antigravity-acp".into(),
            id: id.into(),
            name: name.into(),
            description: None,
            input_modalities: None,
        };
        let listed = output(Ok(vec![
            model("server-default", "Server default"),
            model("gemini-x", "Gemini X"),
        ]));
        assert_eq!(listed.exit_code, EXIT_OK);
        assert_eq!(
            listed.text,
            "server-default  Server default\ngemini-x        Gemini X\n"
        );
        assert_eq!(listed.report["models"][1]["id"], "gemini-x");
        let failed = output(Err(LlmError::new(LlmErrorCode::AcpAuthRequired, "sign in")));
        assert_eq!(failed.exit_code, EXIT_FAILED);
        assert_eq!(failed.report["error"]["code"], "ACP_AUTH_REQUIRED");
    }
}
