//! Requests DSH makes beside a chat's runs: a title request (`purpose: session-title`,
//! no tools) through the chat's adapter, as DSH names a chat. A host tool can make one while its
//! call is parked, so scenarios see it run beside tool turns.

use antigravity_acp::contract::{GenerateOptions, LlmAdapter, Message, Purpose, StreamChunk};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::host::stream_rules::{Progress, StreamValidator};

/// The output cap DSH's title plugin (`@deepseek-ai/dsh-session-title-llm`, mounted by
/// dsh-base with `maxOutputTokens: 64`) puts on every title request.
pub const TITLE_MAX_TOKENS: u64 = 64;

/// The system prompt of a title request (DSH's title plugin sends one; its wording is
/// DSH's, this is its shape).
pub const TITLE_SYSTEM: &str = "Write a short title for this conversation.";

/// The title the adapter streams for `text`, or why it failed; and whether it failed.
/// The request is shaped as DSH's title plugin shapes it: `purpose: session-title`, a
/// system prompt, `maxTokens` 64, the chat's `sessionId`, no tools. Its stream is held to
/// the same rules as every generation's. `model` is `provider/model`.
pub async fn title(
    adapter: &dyn LlmAdapter,
    model: &str,
    text: &str,
    session_id: &str,
    abort: CancellationToken,
) -> (String, bool) {
    let (provider, model) = model.split_once('/').unwrap_or((model, ""));
    let mut request = GenerateOptions::new(provider, model, vec![Message::user(text)]);
    request.purpose = Some(Purpose::SessionTitle);
    request.system = Some(TITLE_SYSTEM.to_owned());
    request.max_tokens = Some(TITLE_MAX_TOKENS);
    request.session_id = Some(session_id.to_owned());
    request.signal = abort;
    let mut stream = adapter.stream(request);
    let mut validator = StreamValidator::new();
    let mut title = String::new();
    while let Some(chunk) = stream.next().await {
        match validator.observe(&chunk) {
            Err(violation) => return (format!("the title stream broke a rule: {violation}"), true),
            Ok(Progress::Continue) => {}
            Ok(Progress::Terminal) => {}
        }
        match chunk {
            StreamChunk::TextDelta { text, .. } => title.push_str(&text),
            StreamChunk::Finish { reason, .. } => {
                return match reason.failure() {
                    Some(failure) => (format!("the title request failed: {}", failure.code), true),
                    None => (title, false),
                };
            }
            _ => {}
        }
    }
    ("the title stream ended without a finish".to_owned(), true)
}
