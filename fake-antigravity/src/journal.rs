//! The fake's journal: one JSON line per event, so a test can judge the adapter by what
//! crossed the wire (ACP frames both ways, MCP requests and results) and by the script
//! expectations the fake checked.
//!
//! Each fake process writes its own file `<dir>/<start-nanos>-<pid>.jsonl`; sorting the
//! file names gives the processes in start order.

pub mod wire_tap;
pub mod writer;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JournalEntry {
    /// The process started.
    Started {
        /// Its pid.
        pid: u32,
        /// Its arguments (without the program).
        args: Vec<String>,
        /// Its working directory.
        cwd: String,
        /// The recorded environment variables that were set (`GEMINI_HOME`,
        /// `ANTIGRAVITY_HARNESS_PATH`, `AGY_ACP_FORCE_FILE_STORAGE`, `BROWSER`).
        env: BTreeMap<String, String>,
        /// The names (never the values) of every environment variable the process
        /// received, sorted, so a test can prove a planted secret never arrived.
        #[serde(default)]
        env_names: Vec<String>,
    },
    /// A line the fake read on stdin: a JSON-RPC frame from the client.
    ///
    /// Credentials are redacted in this copy: in `params.mcpServers[].headers[]` and
    /// `…env[]`, the value of any entry whose name looks secret (`authorization`, `token`,
    /// `key`, `secret`, `cookie`, `password`, `credential`) reads
    /// `<scheme> <redacted len=N hex|text fp=XXXXXXXX>` (the length, whether it is all hex,
    /// and 8 hex digits of its SHA-256), e.g. `Bearer <redacted len=64 hex fp=1a2b3c4d>`. The fake itself uses the real values.
    AcpIn {
        /// The frame (or `{"unparsed": "<line>"}` when it was not JSON).
        frame: Value,
    },
    /// A line the fake wrote on stdout: a JSON-RPC frame to the client.
    AcpOut {
        /// The frame.
        frame: Value,
    },
    /// An MCP request the fake sent to a host's MCP server.
    McpRequest {
        /// The MCP server's `name` from `session/new`.
        server: String,
        /// `initialize`, `tools/list` or `tools/call`.
        method: String,
        /// The request params.
        params: Value,
        /// The request's JSON-RPC id (none for a notification or a GET); a request sent
        /// twice (an MCP client fault) is journaled twice with the same id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rpc_id: Option<u64>,
    },
    /// The fake spawned a child process that outlives it (`process.spawn_lingering_child`,
    /// `process.slow_death_ms`).
    ChildSpawned {
        /// The child's pid.
        pid: u32,
    },
    /// The answer to an MCP request.
    McpResponse {
        /// The MCP server's name.
        server: String,
        /// The request's method.
        method: String,
        /// The result, when it succeeded.
        result: Option<Value>,
        /// The error text, when it failed (transport or JSON-RPC error).
        error: Option<String>,
        /// The request's params (for `tools/call`: the tool's name and arguments), so
        /// each answer pairs with its call even when calls run in parallel.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        params: Option<Value>,
        /// The JSON-RPC id of the request it answers (none for a notification, a GET, or
        /// an abandoned call); one entry per response received, so an id answered twice
        /// shows twice.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rpc_id: Option<u64>,
    },
    /// What a native tool really did when it ran (a `native` step with a `path` or a
    /// `signal`), one entry per action.
    NativeAction {
        /// The native tool's name.
        tool: String,
        /// `read`, `write` or `signal`.
        action: String,
        /// The path acted on, or `parent` for a signal.
        target: String,
        /// `done`; `denied` (the OS refused it: `EACCES` or `EPERM`, as a Landlock domain
        /// does); or `failed` (another error, such as a missing file).
        outcome: String,
        /// The OS error's text, when it did not succeed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A script expectation did not hold.
    ExpectationFailed {
        /// The turn's index in the script.
        turn: usize,
        /// The step's index in the turn.
        step: usize,
        /// What was expected and what came.
        message: String,
    },
    /// A `native` step the fake did not run because its session disabled the tool
    /// (`_meta.agy.disabledTools`, honoured as 1.3.0 does): nothing was sent for it and
    /// nothing touched disk.
    NativeStepWithheld {
        /// The session whose prompt ran the step.
        session_id: String,
        /// The native tool's name.
        tool: String,
        /// The turn's index in the script.
        turn: usize,
        /// The step's index in the turn.
        step: usize,
    },
    /// A slash command the fake found in a prompt and ran (`prompt.slash_commands`; one
    /// entry per command per prompt, before the command's effects are journaled).
    SlashCommand {
        /// The session whose prompt held it.
        session_id: String,
        /// Its name, lower case, without the `/`: `logout` or `plan`.
        command: String,
    },
    /// The fake wrote `$GEMINI_HOME/antigravity-acp/settings.json` (only ever with
    /// `$GEMINI_HOME` set): a successful `authenticate` set `auth.type`, or `logout` /
    /// `/logout` removed it.
    SettingsWritten {
        /// The `auth.type` now in the file: the method id, or null when it was removed.
        auth_type: Option<String>,
        /// What wrote it: `authenticate`, `logout` (the ACP method) or `/logout` (the
        /// slash command in a prompt).
        by: String,
    },
    /// A session file the fake held open (`session_new.hold_conversation_files`, as
    /// 1.3.0's SQLite does) whose path no longer names it: it was removed or replaced
    /// while the process ran (B08 forbids it). Journaled once per file, when the fake next
    /// looks.
    ConversationFileVanished {
        /// The session the file belongs to.
        session_id: String,
        /// The file, relative to `$GEMINI_HOME` with `/` separators
        /// (`antigravity-acp/conversations/<id>.db`).
        file: String,
        /// When the fake noticed: `session/new`, `session/prompt` or `exit`.
        noticed_at: String,
    },
    /// A server fault of `fake.faults` struck: the fake did it to the frame it was about
    /// to write (journaled as it strikes, before the frame's bytes or the act, so a fault
    /// that ends the process is journaled too). A scripted fault the fake never reached
    /// leaves no entry; one entry per fault per process.
    ServerFaultApplied {
        /// The fault's kind as the script spells it (`sigkill`, `garbage_line`, ...).
        fault: String,
        /// The scripted `at_frame` of the fault that struck, to tell it from another
        /// scripted fault of the same kind.
        at_frame: usize,
        /// The index of the frame it struck at (0: the process's first frame): `at_frame`,
        /// or later for a kind that waits for a frame of its shape (`response_twice`,
        /// `chunk_after_result`).
        frame: usize,
        /// What it did to that frame, in a few words (e.g. `wrote the first 12 of 25
        /// bytes instead of the frame`).
        effect: String,
    },
    /// An MCP client fault of `mcp_client.fault` was applied to a `tools/call`: journaled
    /// once the misbehaviour happened on the wire (the request written and the connection
    /// dropped, the call sent twice, the replay sent after the turn, ...), beside the
    /// `McpRequest` and `McpResponse` entries of the requests it sent. A call that fails
    /// before the fault could act (no connection, no answer to reset) leaves no entry.
    McpFaultApplied {
        /// The fault's kind as the script spells it (`call_twice`, `burst`, ...).
        fault: String,
        /// The index of the `tools/call` it struck, among this process's (the scripted
        /// `call`).
        call: usize,
        /// The MCP server's name from `session/new`.
        server: String,
        /// What it did, in a few words (e.g. `POSTed request 3 twice at once`).
        effect: String,
    },
    /// A prompt that no scripted turn matches.
    UnmatchedPrompt {
        /// The prompt's text.
        prompt: String,
    },
    /// The process is about to exit.
    Exited {
        /// Why: `stdin closed`, `signal` (SIGTERM or SIGINT), or `error: …` when the
        /// connection failed (for example stdout closed).
        reason: String,
    },
}

/// Reads every journal file in `dir`, in process start order.
pub fn read_dir(dir: &std::path::Path) -> std::io::Result<Vec<Vec<JournalEntry>>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path)?;
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| {
                    serde_json::from_str(l).map_err(|e| {
                        std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            format!("{}: {e}", path.display()),
                        )
                    })
                })
                .collect()
        })
        .collect()
}
