//! Requests DSH makes beside a chat's runs: a title request (`purpose: title`, no tools)
//! through the chat's adapter, as DSH names a chat. A host tool can make one while its
//! call is parked, so scenarios see it run beside tool turns.

use antigravity_acp::contract::{
    GenerateRequest, LlmAdapter, Message, Purpose, StreamPart, UserPart,
};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

/// The title the adapter streams for `text`, or why it failed; and whether it failed.
pub async fn title(
    adapter: &dyn LlmAdapter,
    model: &str,
    text: &str,
    abort: CancellationToken,
) -> (String, bool) {
    let mut request = GenerateRequest::chat(
        model,
        "",
        vec![Message::User(vec![UserPart::Text(text.to_owned())])],
    );
    request.purpose = Purpose::Title;
    request.abort = abort;
    let mut stream = adapter.generate(request);
    let mut title = String::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(StreamPart::BlockDelta { delta, .. }) => title.push_str(&delta),
            Ok(StreamPart::Finish { .. }) => return (title, false),
            Ok(_) => {}
            Err(error) => return (format!("the title request failed: {:?}", error.code), true),
        }
    }
    (
        "the title stream ended without a terminal part".to_owned(),
        true,
    )
}
