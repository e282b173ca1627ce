//! Serving the fake over any byte streams: the in-process entry point (tests, dsh-sim)
//! and what the binary runs on stdio. The streams are tapped for the journal, then
//! handed to the ACP SDK.

use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol::ByteStreams;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::acp::dispatch::serve_connection;
use crate::journal::wire_tap::{TappedReader, TappedWriter};
use crate::journal::writer::JournalWriter;
use crate::process::glog::Glog;
use crate::process::stdout_lines::{LineInjector, StdoutLines};
use crate::process::version_override::VersionOverride;
use crate::script::Script;
use crate::state::fake_agent::FakeAgent;
use crate::state::held_files::HeldConversationFiles;

/// What one served connection does.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The script (`Script::default()` is the default profile).
    pub script: Script,
    /// `$GEMINI_HOME`, named in auth and not-found errors.
    pub gemini_home: PathBuf,
    /// Whether the fake may write into `gemini_home` as the real server does (each
    /// session's conversation files, `settings.json`, the token's removal): only when it
    /// came from `$GEMINI_HOME`, never a developer's real `~/.gemini`.
    pub writes_home: bool,
    /// Where ACP and MCP traffic is journaled, if anywhere.
    pub journal: Option<Arc<JournalWriter>>,
    /// stderr diagnostics.
    pub log: Glog,
    /// The session files held open while the fake runs; the caller keeps a clone to look
    /// at them once more as the process exits.
    pub held_files: Arc<HeldConversationFiles>,
}

impl ServeOptions {
    /// Options for `script`: `GEMINI_HOME` from the environment (written into only when
    /// set), no journal, no debug.
    pub fn new(script: Script) -> Self {
        let (gemini_home, writes_home) = resolve_gemini_home();
        Self {
            script,
            gemini_home,
            writes_home,
            journal: None,
            log: Glog::default(),
            held_files: Arc::default(),
        }
    }
}

/// `$GEMINI_HOME`, or `$HOME/.gemini`; the flag says whether it came from `GEMINI_HOME`.
pub fn resolve_gemini_home() -> (PathBuf, bool) {
    match std::env::var_os("GEMINI_HOME").filter(|v| !v.is_empty()) {
        Some(home) => (PathBuf::from(home), true),
        None => {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            (home.join(".gemini"), false)
        }
    }
}

/// Why serving stopped other than the client closing its side.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The ACP connection failed (for example stdout closed).
    #[error("ACP connection failed: {0}")]
    Connection(#[from] agent_client_protocol::Error),
}

/// Serves ACP on `reader`/`writer` until `reader` reaches end of file.
pub async fn serve<R, W>(options: ServeOptions, reader: R, writer: W) -> Result<(), ServeError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let reader = TappedReader::new(reader, options.journal.clone());
    let stdout_lines = StdoutLines::default();
    // Raw lines go below the frames the SDK writes and above the tap, so the journal
    // shows them (as unparsed frames) where they crossed the pipe.
    // The version override rewrites the `initialize` answer below the SDK (which always
    // answers its own version) and above the tap, so the journal shows what was sent.
    let writer = VersionOverride::new(
        LineInjector::new(
            TappedWriter::new(writer, options.journal.clone()),
            stdout_lines.clone(),
        ),
        Some(options.script.initialize.protocol_version),
    );
    let transport = ByteStreams::new(writer.compat_write(), reader.compat());
    let mut agent = FakeAgent::new(
        options.script,
        options.gemini_home,
        options.journal,
        options.log,
    );
    agent.stdout_lines = stdout_lines;
    agent.held_files = options.held_files;
    if options.writes_home {
        agent.writable_home = Some(agent.gemini_home.clone());
    }
    let agent = Arc::new(agent);
    serve_connection(agent, transport).await?;
    Ok(())
}
