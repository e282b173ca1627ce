//! `ChunkStreamHandle`: one generation's [`ChunkStream`], read by JS a batch at a time.
//! A call across the boundary costs far more than a chunk (an `async fn` per chunk tops
//! out near 10k calls/s, the adapter streams several times that), so `nextBatch` hands
//! over everything buffered, up to a bound, as one JSON array. The channel stays bounded:
//! while JS does not pull, the adapter waits.
//!
//! The one `finish` is the adapter's guarantee, not the binding's: a stream whose producer
//! went away without one (a turn task that panicked) ends with an `error` finish, code
//! `ACP_INTERNAL`, from `ChunkStream` itself, so the handle only converts.

use std::sync::Arc;

use antigravity_acp::contract::ChunkStream;
use napi_derive::napi;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::failure::{INVALID_REQUEST, Result, envelope, guard, thrown, to_json};

/// The most chunks one `nextBatch` takes when JS names no bound; exported to JS as
/// `DEFAULT_BATCH`, the bound the glue (`lib/adapter.js`) asks for.
#[napi]
pub const DEFAULT_BATCH: u32 = 256;

/// One generation's chunks, as JS pulls them (the JS class `ChunkStreamHandle`).
#[napi]
pub struct ChunkStreamHandle {
    /// `None` once closed: dropping the stream is DSH's early return.
    stream: Arc<Mutex<Option<ChunkStream>>>,
    /// `GenerateOptions.signal`.
    signal: CancellationToken,
    /// Cancelled by `close`, so a pending `nextBatch` ends at once.
    closed: CancellationToken,
}

impl ChunkStreamHandle {
    /// A handle over `stream`, whose request carries `signal`.
    pub fn new(stream: ChunkStream, signal: CancellationToken) -> Self {
        Self {
            stream: Arc::new(Mutex::new(Some(stream))),
            signal,
            closed: CancellationToken::new(),
        }
    }
}

#[napi]
impl ChunkStreamHandle {
    /// The next chunks, a JSON array of DSH `StreamChunk`s in the envelope (`failure`):
    /// waits for one, then takes every chunk already buffered behind it, up to `max`
    /// (default 256). `[]` once the stream has ended (after its `finish`) or was closed.
    #[napi]
    pub async fn next_batch(&self, max: Option<u32>) -> napi::Result<String> {
        let (slot, closed) = (self.stream.clone(), self.closed.clone());
        envelope(async move {
            let max = match max {
                Some(0) => {
                    return Err(thrown(INVALID_REQUEST, "nextBatch: max must be at least 1"));
                }
                Some(max) => max,
                None => DEFAULT_BATCH,
            };
            let mut slot = slot.lock().await;
            let Some(stream) = slot.as_mut() else {
                return Ok("[]".to_owned());
            };
            let batch = tokio::select! {
                batch = stream.recv_batch(max as usize) => batch,
                () = closed.cancelled() => Vec::new(),
            };
            if closed.is_cancelled() {
                slot.take();
                return Ok("[]".to_owned());
            }
            to_json(&batch)
        })
        .await
    }

    /// Cancels `GenerateOptions.signal`: the adapter aborts the generation at once (the
    /// stream then ends with an `aborted` finish, code `ABORTED`).
    #[napi]
    pub fn abort(&self) -> Result<()> {
        guard(|| {
            self.signal.cancel();
            Ok(())
        })
    }

    /// Drops the stream: DSH's early return (the iterator's `return()`). A `nextBatch`
    /// in flight resolves `[]`.
    #[napi]
    pub fn close(&self) -> Result<()> {
        guard(|| {
            self.closed.cancel();
            if let Ok(mut slot) = self.stream.try_lock() {
                slot.take();
            }
            Ok(())
        })
    }
}
