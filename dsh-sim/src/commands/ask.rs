//! `dsh-sim ask PROMPT`: one chat turn through the adapter, printed as it streams, for
//! trying a server by hand: the fake (its default profile, or a script), the installed
//! pinned build, or any ACP command. Text goes to stdout as it arrives; reasoning, tool
//! calls, occupancy and the finish go to stderr. With `--tools`, each tool call the model
//! makes is answered with its own arguments as JSON text (nothing is run) and the turn
//! continues, up to [`MAX_ROUNDS`] rounds.

use std::io::Write;
use std::path::{Path, PathBuf};

use antigravity_acp::contract::{
    AssistantPart, BlockKind, FinishReason, GenerateRequest, LlmAdapter, Message, StreamPart,
    ToolCallPart, ToolDefinition, ToolResult, UserPart,
};
use antigravity_acp::{
    AdapterConfig, AntigravityProvider, DEFAULT_MODEL, ServerCommand, ServerSource,
};
use futures::StreamExt;

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
    /// A model id without the adapter prefix (default: the server's own default).
    pub model: Option<String>,
    /// Tools offered to the model.
    pub tools: Vec<ToolDefinition>,
}

/// Why `ask` failed.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// The adapter ended the generation with an error.
    #[error("the generation failed: {0}")]
    Generation(antigravity_acp::contract::LlmError),
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
    let config = AdapterConfig {
        server: server_source(&args.server),
        scratch_root: Some(scratch.to_owned()),
        ..AdapterConfig::default()
    };
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
    let model = args.model.as_ref().map_or_else(
        || DEFAULT_MODEL.to_owned(),
        |id| format!("{}/{id}", antigravity_acp::ADAPTER_ID),
    );
    let mut messages = vec![Message::User(vec![UserPart::Text(args.prompt.clone())])];
    for _ in 0..MAX_ROUNDS {
        let mut request =
            GenerateRequest::chat(&model, "You are talking to dsh-sim ask.", messages.clone());
        request.tools = args.tools.clone();
        let mut stream = provider.generate(request);
        let mut kinds = std::collections::HashMap::new();
        let mut said = Vec::new();
        let mut results = Vec::new();
        let mut finish = FinishReason::Stop;
        while let Some(item) = stream.next().await {
            match item.map_err(AskError::Generation)? {
                StreamPart::BlockStart { index, kind } => {
                    kinds.insert(index, kind);
                }
                StreamPart::BlockDelta { index, delta } => {
                    if kinds.get(&index) == Some(&BlockKind::Reasoning) {
                        write!(notes, "{delta}")?;
                        notes.flush()?;
                        said.push(AssistantPart::Reasoning(delta));
                    } else {
                        write!(out, "{delta}")?;
                        out.flush()?;
                        said.push(AssistantPart::Text(delta));
                    }
                }
                StreamPart::BlockEnd { .. } => {}
                StreamPart::ToolCall {
                    call_id,
                    tool_name,
                    arguments,
                    ..
                } => {
                    writeln!(
                        notes,
                        "\n[tool call] {tool_name} {arguments} (answered with its arguments)"
                    )?;
                    results.push(ToolResult {
                        call_id: call_id.clone(),
                        tool_name: tool_name.clone(),
                        output: serde_json::Value::String(arguments.to_string()),
                        is_error: false,
                    });
                    said.push(AssistantPart::ToolCall(ToolCallPart {
                        call_id,
                        tool_name,
                        arguments,
                    }));
                }
                StreamPart::ContextOccupancy { used, size } => {
                    writeln!(notes, "\n[context] {used}/{size} tokens")?;
                }
                StreamPart::Finish { reason } => finish = reason,
            }
        }
        writeln!(out)?;
        writeln!(notes, "[finish] {finish:?}")?;
        if finish != FinishReason::ToolCalls {
            return Ok(finish);
        }
        messages.push(Message::Assistant(said));
        messages.push(Message::Tool(results));
    }
    Err(AskError::TooManyRounds)
}
