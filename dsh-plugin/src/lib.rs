//! `antigravity-acp-dsh`: the Node binding of the `antigravity-acp` adapter, loaded by the
//! Cordis plugin in this folder (`index.js`). It converts and nothing else: DSH's values
//! arrive as JSON text in DSH's own wire names, are read with serde into the adapter's
//! contract types (`antigravity_acp::contract`), and go back out the same way. Every
//! decision (what is refused, how a turn runs, which codes fail) is the adapter's.
//!
//! - [`provider`]: `Provider`, one `AntigravityProvider` per plugin scope.
//! - [`stream`]: `ChunkStreamHandle`, one generation, handed to JS a batch at a time.
//! - [`failure`]: the thrown errors' codes, and panics turned into `ACP_INTERNAL`.
//! - [`user_commands`]: the `antigravity-acp-dsh` binary's commands (`doctor`, `status`,
//!   `login`, `logout`, `models`), run by the adapter's `user_commands`.
//! - `bench` (feature `bench`, the benchmark's own build only): `benchDrain`, which drains a
//!   stream inside Rust.
//! - `test_hooks` (feature `test-hooks`, the debug addon CI tests): functions that panic or
//!   end a stream without a finish.
//! - `test_overrides` (feature `test-hooks`): adapter settings DSH users cannot set, from
//!   `ANTIGRAVITY_ACP_DSH_TEST_OVERRIDES`, for `dsh-sim run --real-loop`.
//!
//! One tokio runtime serves the process: napi's own (`tokio_rt`); every adapter task
//! runs on it.

#[cfg(feature = "bench")]
pub mod bench;
pub mod failure;
pub mod provider;
pub mod stream;
#[cfg(feature = "test-hooks")]
pub mod test_hooks;
#[cfg(feature = "test-hooks")]
pub mod test_overrides;
pub mod user_commands;
