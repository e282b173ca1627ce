//! `dsh-sim ask PROMPT`: one chat turn through the adapter, printed as it streams, for
//! trying a server by hand: the fake (its default profile, or a script), the installed
//! pinned build, or any ACP command. Text goes to stdout as it arrives; reasoning, tool
//! calls and the finish go to stderr. With `--tools`, each tool call the model
//! makes is answered with its own arguments as JSON text (nothing is run) and the turn
//! continues, up to [`MAX_ROUNDS`] rounds.

use std::io::Write;
use std::path::{Path, PathBuf};

use antigravity_acp::contract::{
    ContentBlock, FinishReason, GenerateOptions, LlmAdapter, LlmFailure, Message, StreamChunk,
    ToolSchema,
};
use antigravity_acp::{
    ADAPTER_ID, AdapterConfig, AntigravityProvider, SERVER_DEFAULT_MODEL, ServerCommand,
    ServerSource,
};
use futures::StreamExt;

use crate::host::assemble::echoed_round;
use crate::runner::confinement::{ConfinementOptions, RunnerPaths};

/// How many tool rounds one `ask` answers before it gives up.
pub const MAX_ROUNDS: usize = 8;

/// Which server `ask` talks to.
#[derive(Debug, Clone)]
pub enum AskServer {
    /// The scripted fake (`dsh-sim fake-server`), with an optional script file.
    Fake {
        /// This binary.
        program: PathBuf,
        /// `--script` for the fake.
        script: Option<PathBuf>,
    },
    /// The pinned build, installed and verified by the adapter.
    Installed,
    /// Any ACP server command.
    Command(ServerCommand),
}

/// What `ask` was told.
#[derive(Debug, Clone)]
pub struct AskArgs {
    /// The user's message.
    pub prompt: String,
    /// The server.
    pub server: AskServer,
    /// A model id (default: `server-default`, the server's own default).
    pub model: Option<String>,
    /// Tools offered to the model.
    pub tools: Vec<ToolSchema>,
    /// The server's confinement (`--confinement`, `--allow-read`, `--allow-write`).
    pub confinement: ConfinementOptions,
}

/// Why `ask` failed.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// The adapter ended the generation with an `error` or `aborted` finish.
    #[error("the generation failed: {}: {}", .0.code, .0.message)]
    Generation(LlmFailure),
    /// The model kept calling tools.
    #[error("the model was still calling tools after {MAX_ROUNDS} rounds")]
    TooManyRounds,
    /// Printing failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

fn server_source(server: &AskServer) -> ServerSource {
    match server {
        AskServer::Fake { program, script } => {
            let mut args = vec!["fake-server".to_owned()];
            if let Some(script) = script {
                args.extend(["--script".to_owned(), script.display().to_string()]);
            }
            ServerCommand {
                program: program.clone(),
                args,
                env: Vec::new(),
            }
            .into()
        }
        AskServer::Installed => ServerSource::default(),
        AskServer::Command(command) => command.clone().into(),
    }
}

/// Runs the turn, printing to `out` (text) and `notes` (everything else); the finish.
pub async fn run_ask(
    args: AskArgs,
    scratch: &Path,
    out: &mut (dyn Write + Send),
    notes: &mut (dyn Write + Send),
) -> Result<FinishReason, AskError> {
    let mut config = AdapterConfig {
        server: server_source(&args.server),
        scratch_root: Some(scratch.to_owned()),
        ..AdapterConfig::default()
    };
    // The fake reads its script; a confined fake must be let read it.
    let mut own = RunnerPaths::default();
    if let AskServer::Fake {
        script: Some(script),
        ..
    } = &args.server
    {
        own.read.push(script.clone());
    }
    own.apply(&args.confinement, &mut config);
    let provider = AntigravityProvider::new(config);
    let outcome = converse(&provider, &args, out, notes).await;
    provider.dispose().await;
    outcome
}

async fn converse(
    provider: &AntigravityProvider,
    args: &AskArgs,
    out: &mut (dyn Write + Send),
    notes: &mut (dyn Write + Send),
) -> Result<FinishReason, AskError> {
    let model = args.model.as_deref().unwrap_or(SERVER_DEFAULT_MODEL);
    let mut messages = vec![Message::user(args.prompt.clone())];
    for round in 0..MAX_ROUNDS {
        let mut request = GenerateOptions::new(ADAPTER_ID, model, messages.clone());
        request.system = Some("You are talking to dsh-sim ask.".to_owned());
        request.tools = Some(args.tools.clone());
        let mut stream = provider.stream(request);
        let mut chunks = Vec::new();
        let mut finish = FinishReason::Stop;
        while let Some(chunk) = stream.next().await {
            match &chunk {
                StreamChunk::ReasoningDelta { text, .. } => {
                    write!(notes, "{text}")?;
                    notes.flush()?;
                }
                StreamChunk::TextDelta { text, .. } => {
                    write!(out, "{text}")?;
                    out.flush()?;
                }
                StreamChunk::BlockEnd {
                    block: ContentBlock::ToolCall(call),
                    ..
                } => writeln!(
                    notes,
                    "\n[tool call] {} {} (answered with its arguments)",
                    call.name, call.arguments
                )?,
                StreamChunk::Finish { reason, .. } => finish = reason.clone(),
                _ => {}
            }
            chunks.push(chunk);
        }
        writeln!(out)?;
        writeln!(notes, "[finish] {finish:?}")?;
        if let Some(failure) = finish.failure() {
            return Err(AskError::Generation(failure.clone()));
        }
        if finish != FinishReason::ToolCalls {
            return Ok(finish);
        }
        messages.extend(echoed_round(
            format!("ask-{round}"),
            &chunks,
            &format!("{ADAPTER_ID}/{model}"),
        ));
    }
    Err(AskError::TooManyRounds)
}
