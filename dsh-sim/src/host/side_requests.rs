//! Requests DSH makes beside a chat's runs: a title request (`purpose: session-title`,
//! no tools) through the chat's adapter, as DSH names a chat. A host tool can make one while its
//! call is parked, so scenarios see it run beside tool turns.

use antigravity_acp::contract::{GenerateOptions, LlmAdapter, Message, Purpose, StreamChunk};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

/// The title the adapter streams for `text`, or why it failed; and whether it failed.
/// `model` is `provider/model`.
pub async fn title(
    adapter: &dyn LlmAdapter,
    model: &str,
    text: &str,
    abort: CancellationToken,
) -> (String, bool) {
    let (provider, model) = model.split_once('/').unwrap_or((model, ""));
    let mut request = GenerateOptions::new(provider, model, vec![Message::user(text)]);
    request.purpose = Some(Purpose::SessionTitle);
    request.signal = abort;
    let mut stream = adapter.stream(request);
    let mut title = String::new();
    while let Some(chunk) = stream.next().await {
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
