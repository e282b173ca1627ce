//! What an adapter tells DSH about itself (`@deepseek-ai/dsh-llm`'s `LlmProviderInfo`,
//! `LlmModelInfo`, `LlmResolvedModelInfo` and the provider's retry policy), with DSH's
//! wire names.

use serde::{Deserialize, Serialize};

/// Display metadata for one provider route (DSH's `LlmProviderInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmProviderInfo {
    /// The route key (equal to the provider asked about).
    pub id: String,
    /// A name for people.
    pub name: String,
}

/// A request modality a model accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelModality {
    /// Text.
    Text,
    /// Images.
    Image,
}

/// One model the adapter offers (DSH's `LlmModelInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmModelInfo {
    /// The provider route that owns it.
    pub provider: String,
    /// The model id passed back in `GenerateOptions.model`.
    pub id: String,
    /// The server's own name for it.
    pub name: String,
    /// The server's description, when it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// What requests to it may carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_modalities: Option<Vec<ModelModality>>,
}

/// A model's context capacity (DSH's `LlmModelContext`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmModelContext {
    /// The context window in tokens.
    pub context_window: u64,
}

/// Everything known about one exact model (DSH's `LlmResolvedModelInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmResolvedModelInfo {
    /// The model itself.
    #[serde(flatten)]
    pub model: LlmModelInfo,
    /// Its context window, once the server reported one (`usage_update.size`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<LlmModelContext>,
}

/// A provider's retry policy (DSH's `NormalRetryPolicyConfig`), which DSH's retry plugin
/// applies to failed steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetryPolicy {
    /// Always `normal`: retry only the listed codes.
    pub mode: String,
    /// How many retries after the first request.
    pub max_retries: u32,
    /// The codes that may be retried.
    pub retryable_codes: Vec<String>,
}
