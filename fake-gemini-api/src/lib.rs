//! `fake-gemini-api`: a scripted loopback fake of Google's Gemini API, the model service
//! that ACP agents (Gemini CLI, Antigravity) call at `GOOGLE_GEMINI_BASE_URL`.
//!
//! It lets scenarios drive real agents with a scripted model. It shares no code with the
//! adapter or the other fakes.
//!
//! Entry points: [`ModelApi::start`] (in-process, on the caller's runtime), the
//! [`ModelScript`] format, the [`JournalEntry`] shapes and [`read_journal`].
//!
//! Layout, one responsibility per module:
//! - [`script`]: the script's types and checks; [`segments`]: steps split into responses.
//! - [`request`]: the request wire; [`wire`]: the response wire and error bodies.
//! - [`locate`]: where a request stands in its turn; [`choose`]: which turn answers it;
//!   [`resolve`]: host tool names to
//!   declared names; [`expect`]: `expect_result` checks; [`utility`]: JSON side requests.
//! - [`dispatch`]: a request's play; [`plan`]: a segment's parts; [`playback`]: sending.
//! - [`journal`]: entries, writer, reader; [`record`]: a request's journal entry.
//! - [`handler`]: routing and answering; [`server`]: the [`ModelApi`] lifetime.

pub mod choose;
pub mod dispatch;
pub mod error;
pub mod expect;
pub mod handler;
pub mod journal;
pub mod locate;
pub mod plan;
pub mod playback;
pub mod record;
pub mod request;
pub mod resolve;
pub mod script;
pub mod segments;
pub mod server;
pub mod utility;
pub mod wire;

pub use error::ModelApiError;
pub use journal::{JournalEntry, JournalError, read_journal};
pub use script::{ModelScript, ModelStep, ModelTurn, ScriptError};
pub use server::ModelApi;
