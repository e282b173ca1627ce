//! The host contract: what DSH offers its LLM plugins, written down in Rust.
//!
//! DSH itself is TypeScript; this module is the Rust image of its plugin API so that
//! the adapter can be built and judged outside DSH. `dsh-sim` implements the host side
//! ([`AdapterRegistry`]) and drives adapters through [`LlmAdapter`].

mod error;
mod registry;
mod request;
mod stream;

pub use error::{LlmError, LlmErrorCode};
pub use registry::{AdapterRegistration, AdapterRegistry, RegistryError};
pub use request::{
    AssistantPart, BinaryPart, GenerateRequest, Message, Purpose, SamplingOptions, ToolCallPart,
    ToolDefinition, ToolResult, UserPart,
};
pub use stream::{BlockKind, FinishReason, PartSender, PartStream, StreamPart};

use futures::future::BoxFuture;

/// A model an adapter offers, as DSH lists it (`<adapter id>/<model>`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ModelInfo {
    /// The full DSH model id, `<adapter id>/<model>`.
    pub id: String,
    /// A name for people.
    pub display_name: String,
}

/// An LLM backend that DSH can drive.
///
/// `generate` never fails synchronously: every outcome, including an invalid request,
/// reaches the caller through the returned stream, which ends with exactly one
/// [`StreamPart::Finish`] or one [`LlmError`].
pub trait LlmAdapter: Send + Sync {
    /// The adapter's id, the prefix of its model ids.
    fn id(&self) -> &str;

    /// The models this adapter offers, as far as it knows them now (synchronous: it
    /// never starts anything). For `antigravity-acp` that is the configured list until
    /// [`LlmAdapter::discover_models`] ran, and the server's real catalogue after.
    fn models(&self) -> Vec<ModelInfo>;

    /// Asks the backend for its real model catalogue, then answers like
    /// [`LlmAdapter::models`]. The default asks nothing and returns `models()`.
    fn discover_models(&self) -> BoxFuture<'_, Result<Vec<ModelInfo>, LlmError>> {
        Box::pin(async move { Ok(self.models()) })
    }

    /// Starts (or continues) a generation and streams its parts.
    fn generate(&self, request: GenerateRequest) -> PartStream;

    /// Tears down everything the adapter owns: running turns, parked calls, processes,
    /// scratch directories. Resolves once all of it is gone.
    fn dispose(&self) -> BoxFuture<'_, ()>;
}
