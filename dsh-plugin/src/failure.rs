//! How the binding fails: with a stable code string and a message the adapter or the
//! binding wrote. A synchronous method throws a JS `Error` whose `code` is that string; an
//! async one resolves to a JSON envelope, `{"ok": value}` or `{"error": {code, message}}`
//! (napi rejects an async call only with its own status names, never a custom code). The
//! JS glue turns either into DSH's `LlmError(message, code)`. Every code is an
//! `LlmErrorCode` of the adapter (one table): besides what a generation reports, a refused
//! plugin config (`ACP_INVALID_CONFIG`), a request that does not have DSH's shape
//! (`ACP_INVALID_REQUEST`) and a caught panic (`ACP_INTERNAL`).
//!
//! No message here carries a value from the request or a panic's payload: serde's text
//! quotes the values it refuses (`invalid type: string "…"`, which may be prompt text), and
//! Rust's own panic messages can quote data (an index, a key). A refused request names
//! serde's category and the position; a panic gets [`PANICKED`], and the panic hook this
//! crate installs ([`quiet_panics`]) writes only the panic's source location.

use std::future::Future;
use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::sync::Once;

use antigravity_acp::contract::{LlmError, LlmErrorCode};
use futures::FutureExt;

/// The plugin config was refused (`PluginConfig`); the message names the field.
pub const INVALID_CONFIG: LlmErrorCode = LlmErrorCode::AcpInvalidConfig;

/// A request's JSON (options, images, chunk bound) does not have DSH's shape.
pub const INVALID_REQUEST: LlmErrorCode = LlmErrorCode::AcpInvalidRequest;

/// A thrown error: `code` becomes the JS error's `code`.
pub type Thrown = napi::Error<String>;

/// A binding result whose error is [`Thrown`].
pub type Result<T> = std::result::Result<T, Thrown>;

/// An error with `code` and `message`.
pub fn thrown(code: LlmErrorCode, message: impl Into<String>) -> Thrown {
    napi::Error::new(code.as_str().to_owned(), message.into())
}

/// DSH's failure as a thrown error: its code string and its sanitized message.
pub fn from_llm_error(error: &LlmError) -> Thrown {
    thrown(error.code, error.message.clone())
}

/// Serializes `value` for JS; a failure (never expected for the contract's types) is an
/// internal error.
pub fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value)
        .map_err(|_| internal("the binding could not serialize a contract value"))
}

/// Reads `json` as a `T`, or throws [`INVALID_REQUEST`] naming `what`, the kind of fault
/// (serde's category) and where it is (line and column): never serde's text, which quotes
/// the refused value.
pub fn from_json<T: serde::de::DeserializeOwned>(what: &str, json: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|error| {
        thrown(
            INVALID_REQUEST,
            format!(
                "{what} does not have DSH's shape: {} at line {} column {}",
                fault(error.classify()),
                error.line(),
                error.column()
            ),
        )
    })
}

/// What a serde category means, in words that quote nothing.
fn fault(category: serde_json::error::Category) -> &'static str {
    use serde_json::error::Category;
    match category {
        Category::Io => "an I/O failure",
        Category::Syntax => "text that is not JSON",
        Category::Data => "a value of the wrong type or shape",
        Category::Eof => "JSON that ends early",
    }
}

/// The binding's own fault (`ACP_INTERNAL`).
pub fn internal(message: &str) -> Thrown {
    thrown(LlmErrorCode::AcpInternal, message)
}

/// The message of every caught panic, whatever its payload.
pub const PANICKED: &str = "the adapter panicked (an internal fault; the host goes on)";

/// Runs `body`; a panic becomes a thrown `ACP_INTERNAL` instead of unwinding into Node.
pub fn guard<T>(body: impl FnOnce() -> Result<T>) -> Result<T> {
    quiet_panics();
    std::panic::catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_payload| Err(panicked()))
}

/// Awaits `body`, which yields JSON text, and wraps its outcome in the envelope an async
/// method resolves to; a panic while polling it is an `ACP_INTERNAL` error.
pub async fn envelope(body: impl Future<Output = Result<String>>) -> napi::Result<String> {
    quiet_panics();
    let outcome = AssertUnwindSafe(body)
        .catch_unwind()
        .await
        .unwrap_or_else(|_payload| Err(panicked()));
    Ok(match outcome {
        Ok(json) => format!("{{\"ok\":{json}}}"),
        Err(error) => {
            let failure = serde_json::json!({"code": error.status, "message": error.reason});
            format!("{{\"error\":{failure}}}")
        }
    })
}

/// A caught panic. Its payload is dropped unread: Rust's own panic messages can quote data.
fn panicked() -> Thrown {
    internal(PANICKED)
}

/// Replaces the panic hook, once, before any code of this crate can panic (every binding
/// call goes through [`guard`] or [`envelope`], and the adapter's tasks start only from a
/// `Provider` built through `guard`). The default hook prints the payload to stderr, where
/// the user sees it; this one prints only where the panic happened (a source location,
/// never data), and nothing else. The hook is this library's own: a cdylib links its own
/// `std`, so no other Rust code in the host process is affected.
pub fn quiet_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let location = info
                .location()
                .map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_default();
            // A failed write to stderr has nowhere to be reported.
            let _written = writeln!(
                std::io::stderr(),
                "antigravity-acp-dsh: a panic was caught{location} (its message is withheld: it may quote data)"
            );
        }));
    });
}
