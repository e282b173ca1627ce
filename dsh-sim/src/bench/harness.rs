//! What every adapter benchmark is built from: a provider whose server is the fake run
//! from this binary with a script written to the bench's workspace, DSH's chat request,
//! and draining a stream to its terminal chunk.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use antigravity_acp::contract::{
    ChunkStream, FinishReason, GenerateOptions, Message, StreamChunk, ToolSchema,
};
use antigravity_acp::{
    ADAPTER_ID, AdapterConfig, AntigravityProvider, ConfinementMode, SERVER_DEFAULT_MODEL,
    ServerCommand,
};
use anyhow::bail;
use futures::StreamExt;
use serde_json::{Value, json};

/// Where the benchmarks write their scripts and scratch roots, and the fake they run.
pub struct Bench {
    /// This binary (`fake-server` and `bench-agent` are its subcommands).
    pub program: PathBuf,
    workspace: tempfile::TempDir,
    next: std::sync::atomic::AtomicUsize,
}

impl Bench {
    /// A fresh workspace for `program`'s fake.
    pub fn new(program: &Path) -> anyhow::Result<Self> {
        Ok(Self {
            program: program.to_owned(),
            workspace: tempfile::Builder::new()
                .prefix("dsh-sim-bench-")
                .tempdir()?,
            next: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// The bench's workspace (a session's cwd for the bare client).
    pub fn workspace(&self) -> &Path {
        self.workspace.path()
    }

    /// Writes `script` to a file of its own; its path.
    pub fn script_file(&self, script: &Value) -> anyhow::Result<PathBuf> {
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = self.workspace.path().join(format!("script-{n}.json"));
        std::fs::write(&path, script.to_string())?;
        Ok(path)
    }

    /// A provider on the fake playing `script`, confined as `confinement` says, with the
    /// rest of `adjust`'s settings.
    pub fn provider(
        &self,
        script: &Value,
        confinement: ConfinementMode,
        adjust: impl FnOnce(&mut AdapterConfig),
    ) -> anyhow::Result<Arc<AntigravityProvider>> {
        let script_path = self.script_file(script)?;
        let scratch = script_path.with_extension("scratch");
        std::fs::create_dir_all(&scratch)?;
        let mut config = AdapterConfig {
            server: ServerCommand {
                program: self.program.clone(),
                args: vec![
                    "fake-server".into(),
                    "--script".into(),
                    script_path.display().to_string(),
                ],
                env: Vec::new(),
            }
            .into(),
            scratch_root: Some(scratch),
            // The confined fake reads its script outside its scratch.
            extra_read_paths: vec![script_path],
            confinement,
            ..AdapterConfig::default()
        };
        adjust(&mut config);
        Ok(Arc::new(AntigravityProvider::new(config)))
    }
}

/// DSH's chat request: one user message, a system prompt, `tools`.
pub fn chat(text: &str, tools: Vec<ToolSchema>) -> GenerateOptions {
    let mut request =
        GenerateOptions::new(ADAPTER_ID, SERVER_DEFAULT_MODEL, vec![Message::user(text)]);
    request.system = Some("You are benchmarked.".to_owned());
    request.tools = Some(tools);
    request
}

/// Every chunk of `stream`.
pub async fn drain(stream: ChunkStream) -> Vec<StreamChunk> {
    stream.collect::<Vec<_>>().await
}

/// Fails unless `parts` end with finish(`reason`).
pub fn expect_finish(parts: &[StreamChunk], reason: FinishReason) -> anyhow::Result<()> {
    match parts.last() {
        Some(StreamChunk::Finish { reason: got, .. }) if *got == reason => Ok(()),
        other => bail!("expected finish({reason:?}), got {other:?}"),
    }
}

/// The tool the scripts call.
pub fn echo_tool() -> ToolSchema {
    ToolSchema {
        name: "echo".into(),
        description: "Echoes its arguments.".into(),
        parameters: json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
    }
}

/// `VmHWM` (peak) or `VmRSS` (current) of this process, in KiB, from `/proc/self/status`.
pub fn memory_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
