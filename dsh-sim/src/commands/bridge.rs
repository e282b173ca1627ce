//! `dsh-sim bridge`: the adapter's real MCP bridge ([`StandaloneBridge`]) on its own, for
//! poking it by hand (MCP Inspector, curl, any MCP client). It exports the tools of a JSON
//! file, announces itself in one JSON line on stdout, answers each valid call itself
//! (echo or deny) and closes when stdin closes.

use std::io::Write;
use std::path::{Path, PathBuf};

use antigravity_acp::contract::ToolSchema;
use antigravity_acp::{BridgeAnswer, BridgeTool, StandaloneBridge};
use serde::Deserialize;
use serde_json::Value;

use crate::host::tools::PERMISSION_DENIED;

/// How the bridge answers each valid call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ResultMode {
    /// A success whose text is the call's arguments as JSON.
    #[default]
    Echo,
    /// An `isError` result, "permission denied by DSH", as DSH answers a denied call.
    Deny,
}

/// One tool of the tools file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolEntry {
    name: String,
    #[serde(default)]
    description: String,
    /// The JSON Schema of its arguments (default: any object).
    #[serde(default = "any_object", alias = "schema")]
    input_schema: Value,
}

fn any_object() -> Value {
    serde_json::json!({ "type": "object" })
}

/// Why the bridge session failed.
#[derive(Debug, thiserror::Error)]
pub enum BridgeSessionError {
    /// The tools file could not be read.
    #[error("{}: cannot read the tools file: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// The tools file is not a JSON array of tools.
    #[error(
        "{}:{line}:{column}: not a tools file (a JSON array of {{\"name\", \"description\", \"input_schema\"}}): {message}",
        path.display()
    )]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The adapter refused to start the bridge (e.g. a tool it cannot export).
    #[error("the bridge did not start: {0}")]
    Start(#[from] antigravity_acp::contract::LlmError),
    /// Writing the announcement or waiting on stdin failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Reads a tools file: a JSON array of `{name, description?, input_schema?}` (`schema`
/// is accepted for `input_schema`, as in scenarios).
pub fn load_tools(path: &Path) -> Result<Vec<ToolSchema>, BridgeSessionError> {
    let text = std::fs::read_to_string(path).map_err(|source| BridgeSessionError::Read {
        path: path.to_owned(),
        source,
    })?;
    let entries: Vec<ToolEntry> =
        serde_json::from_str(&text).map_err(|error| BridgeSessionError::Parse {
            path: path.to_owned(),
            line: error.line(),
            column: error.column(),
            message: error.to_string(),
        })?;
    Ok(entries
        .into_iter()
        .map(|entry| ToolSchema {
            name: entry.name,
            description: entry.description,
            parameters: entry.input_schema,
        })
        .collect())
}

/// The answer to one valid call.
pub fn answer(mode: ResultMode, arguments: &Value) -> BridgeAnswer {
    match mode {
        ResultMode::Echo => BridgeAnswer {
            text: arguments.to_string(),
            is_error: false,
        },
        ResultMode::Deny => BridgeAnswer {
            text: PERMISSION_DENIED.to_owned(),
            is_error: true,
        },
    }
}

/// The announcement line: `{"url", "token", "tools": [{"name", "mcp_name"}]}`.
pub fn announcement(url: &str, token: &str, tools: &[BridgeTool]) -> String {
    serde_json::json!({ "url": url, "token": token, "tools": tools }).to_string()
}

/// Starts the bridge, announces it on `out`, serves until stdin reaches its end, then
/// closes it. Each answered call is noted on stderr (tool name and answer kind only).
pub async fn serve_until_stdin_closes(
    tools: &[ToolSchema],
    mode: ResultMode,
    out: &mut impl Write,
) -> Result<(), BridgeSessionError> {
    let bridge = StandaloneBridge::start(tools, move |tool, arguments| {
        let reply = answer(mode, arguments);
        let kind = if reply.is_error { "isError" } else { "ok" };
        eprintln!("dsh-sim bridge: tools/call {tool} answered {kind}");
        reply
    })
    .await?;
    writeln!(
        out,
        "{}",
        announcement(bridge.url(), bridge.token(), bridge.tools())
    )?;
    out.flush()?;
    // Blocking on stdin is the point: the session lasts exactly as long as it is open.
    let stdin_closed = tokio::task::spawn_blocking(|| {
        std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink())
    })
    .await;
    bridge.close().await;
    match stdin_closed {
        Ok(copied) => copied.map(|_| ()).map_err(Into::into),
        Err(join) => Err(std::io::Error::other(join.to_string()).into()),
    }
}
