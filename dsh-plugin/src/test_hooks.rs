//! Test hooks, built only with the `test-hooks` feature (the debug addon CI tests): a
//! synchronous and an async method that panic, so the Node tests prove a panic becomes an
//! `ACP_INTERNAL` failure (thrown, or in the async envelope) and the host goes on; and a
//! stream whose producer went away without a `finish` (what a panicking turn task leaves),
//! so they prove the handle supplies one.

use antigravity_acp::contract::{ChunkStream, StreamChunk};
use napi_derive::napi;
use tokio_util::sync::CancellationToken;

use crate::failure::{Result, envelope, guard};
use crate::stream::ChunkStreamHandle;

/// Panics inside the binding's guard; JS sees an error with code `ACP_INTERNAL`.
#[napi]
pub fn test_panic() -> Result<()> {
    guard(|| panic!("a test hook panicked on purpose"))
}

/// Panics while the binding's envelope polls it; JS gets `{error: {code: "ACP_INTERNAL"}}`.
#[napi]
pub async fn test_panic_async() -> napi::Result<String> {
    envelope(async { panic!("a test hook panicked on purpose in an async method") }).await
}

/// A handle over a stream that yields one text delta, then ends with no `finish` (its
/// sender dropped, as when a turn task panics).
#[napi]
pub fn test_unfinished_stream() -> Result<ChunkStreamHandle> {
    guard(|| {
        let (sender, stream) = ChunkStream::channel();
        let delta = StreamChunk::TextDelta {
            index: 0,
            text: "partial".to_owned(),
        };
        if !napi::bindgen_prelude::block_on(sender.send(delta)) {
            return Err(crate::failure::internal(
                "the test stream refused its chunk",
            ));
        }
        Ok(ChunkStreamHandle::new(stream, CancellationToken::new()))
    })
}
