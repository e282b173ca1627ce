//! The host contract: DSH's LLM interface (`@deepseek-ai/dsh-llm` 0.1.0-rc.8), one to one
//! in Rust. Every type serializes to DSH's own wire names, so the Node binding
//! (`dsh-plugin/`) converts with serde and nothing else, and `dsh-sim` drives the adapter
//! through the same vocabulary DSH does.
//!
//! - [`LlmAdapter`]: `providerInfo`, `providerRetryPolicy`, `listModels`, `resolveModel`,
//!   `stream`, plus `dispose` (a Cordis plugin's scope disposal).
//! - [`GenerateOptions`], [`Message`], [`ContentBlock`], [`ToolSchema`]: the request.
//! - [`StreamChunk`], [`FinishReason`], [`LlmFailure`]: the stream, read through
//!   [`ChunkStream`].
//! - [`LlmError`], [`LlmErrorCode`]: the failure codes (SCREAMING_SNAKE strings).
//! - [`AdapterRegistry`], the host side of `ctx.llm.registerAdapter`.

mod error;
mod message;
mod models;
mod registry;
mod request;
mod stream;

pub use error::{LlmError, LlmErrorCode, LlmFailure};
pub use message::{
    ContentBlock, ImageAttachmentRef, ImageBlock, Message, Role, TextBlock, ToolCallBlock,
    ToolResultBlock, ToolResultView, blocks_text,
};
pub use models::{
    LlmModelContext, LlmModelInfo, LlmProviderInfo, LlmResolvedModelInfo, ModelModality,
    RetryPolicy,
};
pub use registry::{AdapterRegistry, RegistryError};
pub use request::{GenerateOptions, Purpose, ResolvedImage, ToolSchema};
pub use stream::{
    ChunkSender, ChunkStream, ContentBlockType, FinishReason, STREAM_CAPACITY, StreamChunk,
    TokenUsage,
};

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

/// An LLM backend DSH can drive (DSH's abstract `LlmAdapter`).
///
/// `stream` never fails synchronously: every outcome, an invalid request included,
/// reaches the caller through the returned stream, which ends with exactly one
/// [`StreamChunk::Finish`].
pub trait LlmAdapter: Send + Sync {
    /// Display metadata for one route this adapter was registered for.
    fn provider_info(&self, provider: &str) -> LlmProviderInfo;

    /// The route's retry policy; `None` means DSH's defaults.
    fn provider_retry_policy(&self, provider: &str) -> Option<RetryPolicy>;

    /// The models the adapter can advertise for `provider` (advisory).
    fn list_models(&self, provider: &str) -> BoxFuture<'_, Result<Vec<LlmModelInfo>, LlmError>>;

    /// Everything known about one exact model; settles promptly once `signal` fires.
    fn resolve_model(
        &self,
        provider: &str,
        model: &str,
        signal: CancellationToken,
    ) -> BoxFuture<'_, Result<LlmResolvedModelInfo, LlmError>>;

    /// Streams one model call.
    fn stream(&self, options: GenerateOptions) -> ChunkStream;

    /// Tears down everything the adapter owns: running turns, parked calls, processes,
    /// scratch directories. Resolves once all of it is gone.
    fn dispose(&self) -> BoxFuture<'_, ()>;
}
