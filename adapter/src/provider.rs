//! `AntigravityProvider`: the `LlmAdapter` DSH talks to.

use futures::future::BoxFuture;

use crate::config::AdapterConfig;
use crate::contract::{
    GenerateRequest, LlmAdapter, LlmError, LlmErrorCode, ModelInfo, PartStream,
};
use crate::register::{ADAPTER_ID, SERVER_DEFAULT_MODEL};

/// DSH's adapter over the Antigravity ACP server.
#[derive(Debug)]
pub struct AntigravityProvider {
    config: AdapterConfig,
}

impl AntigravityProvider {
    /// A provider that launches servers as `config` says.
    pub fn new(config: AdapterConfig) -> Self {
        Self { config }
    }
}

impl LlmAdapter for AntigravityProvider {
    fn id(&self) -> &str {
        ADAPTER_ID
    }

    fn models(&self) -> Vec<ModelInfo> {
        std::iter::once(SERVER_DEFAULT_MODEL)
            .chain(self.config.models.iter().map(String::as_str))
            .map(|m| ModelInfo {
                id: format!("{ADAPTER_ID}/{m}"),
                display_name: m.to_owned(),
            })
            .collect()
    }

    fn generate(&self, _request: GenerateRequest) -> PartStream {
        PartStream::failed(LlmError::new(LlmErrorCode::Internal, "not built yet"))
    }

    fn dispose(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}
