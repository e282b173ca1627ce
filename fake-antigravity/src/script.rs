//! The fake's script: what the scripted server does, turn by turn. Parsed strictly: an
//! unknown key or a wrong type is an error (scenarios embed this under `fake:`). The
//! faults' types (`faults`, `mcp_client.fault`) live beside what they do, in `faults/`.

pub mod file;
pub mod latency;
pub mod mcp_version_header;
pub mod prompt;
pub mod refused_native;
pub mod session_close;
pub mod turn_usage;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::faults::{mcp_faults, server_faults};

/// A whole script. Every field has a default, so `{}` is the default profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Whether the fake starts signed in.
    #[serde(default)]
    pub auth: AuthScript,
    /// The model current in a new session (default `gemini-3.8-flash-high`).
    #[serde(default)]
    pub default_model: Option<String>,
    /// The model catalogue (default: the 1.3.0 free tier).
    #[serde(default)]
    pub models: Option<Vec<String>>,
    /// Scripted prompt turns. A prompt runs the turn whose `match` it satisfies; see
    /// [`PromptMatch`]. With no turns the fake echoes each prompt.
    #[serde(default)]
    pub turns: Vec<TurnScript>,
    /// Recorded quirks of the real server, each off by default (claim B02).
    #[serde(default)]
    pub quirks: Quirks,
    /// How the fake's MCP client talks to host MCP servers (default: as the 1.3.0
    /// harness does).
    #[serde(default)]
    pub mcp_client: McpClientScript,
    /// How `authenticate(oauth-*)` signs in when the fake is signed out (docs/antigravity-1.3.0.md §5).
    #[serde(default)]
    pub sign_in: SignInScript,
    /// How the fake behaves as a process (docs/antigravity-1.3.0.md §2).
    #[serde(default)]
    pub process: ProcessScript,
    /// How the fake honours `session/cancel` (docs/antigravity-1.3.0.md §12).
    #[serde(default)]
    pub cancel: CancelScript,
    /// Process lifecycle switches: a start-up delay, exiting on its own while idle.
    #[serde(default)]
    pub lifecycle: crate::lifecycle::LifecycleScript,
    /// How the fake answers `initialize`.
    #[serde(default)]
    pub initialize: InitializeScript,
    /// How the fake answers `session/new`.
    #[serde(default)]
    pub session_new: SessionNewScript,
    /// How the fake reads a `session/prompt` before its turn: the slash commands it
    /// intercepts (default none).
    #[serde(default)]
    pub prompt: prompt::PromptScript,
    /// What the fake does with the `_meta.agy.disabledTools` a session was opened with
    /// (docs/antigravity-1.3.0.md §21; default `honour`, as 1.3.0).
    #[serde(default)]
    pub disabled_tools: DisabledToolsScript,
    /// `session/close`: whether it is advertised, and what the fake does before it
    /// answers one.
    #[serde(default)]
    pub session_close: session_close::SessionCloseScript,
    /// The `usage_update` sent at the end of every answered prompt, after its text and
    /// before its answer (default: on, as 1.3.0 on a plain text turn; `{enabled: false}`
    /// turns it off). A turn with a scripted `usage` step sends only those.
    #[serde(default)]
    pub turn_usage: turn_usage::TurnUsageScript,
    /// How long the fake waits before it handles a request, per method, in milliseconds
    /// (`initialize`, `authenticate`, `session_new`, `session_load`, `session_resume`,
    /// `set_config_option`, `set_mode`, `set_model`, `prompt`; default 0 each). 1.3.0 took
    /// 4.4–5.3 s for `session/new` and about 2.8 s to select a model
    /// (docs/antigravity-1.3.0.md §2).
    #[serde(default)]
    pub latency_ms: latency::LatencyScript,
    /// Server faults injected into the frames the fake writes (`dsh-sim chaos`, B04):
    /// each `{at_frame, kind}` strikes once; see `faults/server_faults.rs` for every kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<server_faults::ServerFault>,
    /// A secret the fake plants where a careless client would leak it: one stderr line at
    /// start, and the message and `data` of every JSON-RPC error it writes. No log line
    /// or error DSH sees may contain it (B04, B05).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planted_secret: Option<String>,
}

/// What the fake does with the built-in tool names a session disabled
/// (`_meta.agy.disabledTools` on `session/new`, `session/load` or `session/resume`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DisabledToolsScript {
    /// As 1.3.0: a disabled tool is not offered to the model, so a `native` step naming
    /// it is withheld: it never runs (nothing touches disk), the client sees no
    /// `tool_call` nor permission request for it, the fake journals
    /// `native_step_withheld`, and the turn goes on with its next step.
    #[default]
    Honour,
    /// An older or different build that does not read the list: every `native` step
    /// runs as scripted.
    Ignore,
}

/// The `session/new` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionNewScript {
    /// Answer every `session/new` with this JSON-RPC error code (message "Internal
    /// error"), signed in or not: a failure that is not "authentication required" (default:
    /// none, sessions open normally).
    #[serde(default)]
    pub error_code: Option<i32>,
    /// Before answering a `session/new` that follows a prompt on this process, ask
    /// `session/request_permission` for this host tool as a late request of that
    /// prompt's turn, which has finished (as `session_close.late_permission` does, for a
    /// server that does not offer `session/close`, as 1.3.0), and wait (up to 5 s) for
    /// the answer, which is journaled. A client whose handlers are detached cancels it
    /// (C33). Default: none.
    #[serde(default)]
    pub late_permission: Option<String>,
    /// Keep each session's conversation on disk, as 1.3.0 does (docs/antigravity-1.3.0.md
    /// §2; B08): once a `session/new`'s params and sign-in pass, before the answer, write
    /// under `$GEMINI_HOME/antigravity-acp/` the files `conversations/<id>.db`, `.db-wal`,
    /// `.db-shm`, `conversations/<id>.meta` (`{"cwd":"<the session cwd>"}`) and the folder
    /// `brain/<id>/` (holding `task.md`); every `session/prompt` then appends its text
    /// blocks to `<id>.db-wal`. Only when `$GEMINI_HOME` is set (never in a real
    /// `~/.gemini`); a write that fails (a read-only home) is logged on stderr and the
    /// session goes on. Default true; `false` writes nothing.
    #[serde(default = "yes")]
    pub conversation_files: bool,
    /// Hold each new session's `.db`, `.db-wal` and `.db-shm` open until the process exits,
    /// as 1.3.0's SQLite does (B08), and journal `conversation_file_vanished` for one whose
    /// path no longer names the held file when the fake next looks (each `session/new` and
    /// `session/prompt`, and as it exits): the runner fails such a run. Default true.
    #[serde(default = "yes")]
    pub hold_conversation_files: bool,
}

impl Default for SessionNewScript {
    fn default() -> Self {
        Self {
            error_code: None,
            late_permission: None,
            conversation_files: true,
            hold_conversation_files: true,
        }
    }
}

fn yes() -> bool {
    true
}

/// The `initialize` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InitializeScript {
    /// The `protocolVersion` the fake answers with, whatever the client asked for
    /// (default 1, as 1.3.0; another value plays a server of another ACP version). The
    /// fake warns on stderr when the client asks for anything but 1; dsh-sim fails the
    /// scenario on it (C05).
    #[serde(default = "acp_v1")]
    pub protocol_version: u64,
    /// Advertise only these sign-in method ids, in 1.3.0's order (default: all four,
    /// `oauth-personal`, `oauth-business`, `gemini-api-key`, `agent-platform`); a server
    /// without `oauth-personal` cannot be signed in through `authenticate` by the adapter.
    #[serde(default)]
    pub auth_methods: Option<Vec<String>>,
    /// Advertise `agentCapabilities.auth.logout` (default true, as 1.3.0; false plays a
    /// server without ACP `logout`, which then answers it "method not found").
    #[serde(default = "advertised")]
    pub logout: bool,
    /// The `agentInfo.name` the fake answers with (default `antigravity-acp`, as 1.3.0;
    /// `gemini-cli` plays Gemini CLI's answer, from which the adapter picks its profile).
    #[serde(default)]
    pub agent_name: Option<String>,
}

impl Default for InitializeScript {
    fn default() -> Self {
        Self {
            protocol_version: acp_v1(),
            auth_methods: None,
            logout: true,
            agent_name: None,
        }
    }
}

fn advertised() -> bool {
    true
}

fn acp_v1() -> u64 {
    1
}

/// The sign-in flow of `authenticate(oauth-personal)` / `oauth-business`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignInScript {
    /// `instant` (default): the flow "completes" at once. `browser`: as 1.3.0 headless,
    /// bind a loopback port, run `$BROWSER <url>` if set, print the sign-in URL line on
    /// stderr, and hold the request until the redirect arrives (`{}`) or `wait_ms` pass
    /// (-32000 "Onboarding failed: Timed out …"); a redirect without `code` fails it.
    #[serde(default)]
    pub flow: SignInFlow,
    /// How long the browser flow waits for the redirect (default 510000, about 8.5 min).
    #[serde(default = "default_sign_in_wait_ms")]
    pub wait_ms: u64,
    /// In the browser flow, act as the user: once the URL is out, send the redirect
    /// (`GET /?state=…&code=…`) to the loopback port, completing the sign-in.
    #[serde(default)]
    pub browser_completes: bool,
    /// Print the URL line on stdout, between the JSON-RPC frames, as 1.1.1 did (default
    /// false: on stderr, as 1.3.0 does).
    #[serde(default)]
    pub url_on_stdout: bool,
}

impl Default for SignInScript {
    fn default() -> Self {
        Self {
            flow: SignInFlow::Instant,
            wait_ms: default_sign_in_wait_ms(),
            browser_completes: false,
            url_on_stdout: false,
        }
    }
}

fn default_sign_in_wait_ms() -> u64 {
    510_000
}

/// How a sign-in completes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SignInFlow {
    /// At once.
    #[default]
    Instant,
    /// Through the loopback browser flow.
    Browser,
}

/// Process behaviours of the real server, each off by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessScript {
    /// Read nothing from stdin for this long after start (1.3.0: 1.2–2.9 s to the
    /// `initialize` answer).
    #[serde(default)]
    pub startup_delay_ms: u64,
    /// Ignore SIGTERM (RC01 did): log it and go on.
    #[serde(default)]
    pub ignore_sigterm: bool,
    /// Stay alive after stdin closes (RC01 lingered) until killed.
    #[serde(default)]
    pub linger: bool,
    /// At start, spawn a child process (`sleep 3600`, in the fake's process group, as the
    /// real server's harness subprocess is) that is never waited for, so it outlives the
    /// fake. Its pid is journaled (`ChildSpawned`).
    #[serde(default)]
    pub spawn_lingering_child: bool,
    /// At start, before reading anything, write this many bytes of diagnostics on stderr
    /// (glog lines), blocking while the pipe is full, as a server logging heavily does: a
    /// client that does not drain stderr leaves the fake stuck before `initialize`.
    #[serde(default)]
    pub stderr_flood_bytes: u64,
    /// At start, spawn a helper (`sh`, in a process group of its own, so the adapter's
    /// group kill does not reach it, holding the fake's stderr open) that exits only this
    /// many milliseconds after the fake is gone, however the fake ended (SIGKILL
    /// included): a server slow to die. Its pid is journaled (`ChildSpawned`). Within the
    /// runner's leak bound (the shutdown grace plus 3 s) it passes; past it, it is a
    /// survivor the leak check reports. 0 (default): none.
    #[serde(default)]
    pub slow_death_ms: u64,
}

/// What the fake does once a prompt was cancelled, before it answers `cancelled`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelScript {
    /// Keep streaming these texts (one `agent_message_chunk` each) after the cancel.
    #[serde(default)]
    pub keep_streaming: Vec<String>,
    /// Send a trailing `agent_message_chunk` "The request was cancelled by the client."
    #[serde(default)]
    pub trailing_chunk: bool,
    /// Answer the cancelled prompt only this long after the cancel (honour it late).
    #[serde(default)]
    pub honour_after_ms: u64,
}

/// The fake's MCP client (docs/antigravity-1.3.0.md §10, §20).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpClientScript {
    /// The protocol version announced in `initialize` (default `2026-07-28`, what the
    /// real harness announces); the header of later requests follows `version_header`.
    #[serde(default = "harness_protocol_version")]
    pub protocol_version: String,
    /// How long a `tools/call` may take before the client gives up on it, in
    /// milliseconds (default 180000, the real server's limit).
    #[serde(default = "default_call_timeout_ms")]
    pub call_timeout_ms: u64,
    /// List every server's tools afresh at the start of every prompt (default false:
    /// lazily, on the first call, as the recordings show).
    #[serde(default)]
    pub list_tools_every_prompt: bool,
    /// After `initialize`, open a GET stream, which must be answered 200 or 405
    /// (default false).
    #[serde(default)]
    pub open_get_stream: bool,
    /// Send the version header on `initialize` too (default false: from the first
    /// request after it, as the MCP spec says and the recordings suggest); it names the
    /// announced version (nothing is negotiated yet), unless `version_header` is `absent`.
    #[serde(default)]
    pub header_on_initialize: bool,
    /// One fault of the client at one `tools/call` (`{kind, call}`; see
    /// [`mcp_faults::McpFaultKind`]); default none, every call is made normally.
    #[serde(default)]
    pub fault: Option<mcp_faults::McpFault>,
    /// Which `MCP-Protocol-Version` header the requests after `initialize` carry:
    /// `negotiated` (default: the version of the server's `initialize` answer, as the MCP
    /// spec requires), `announced` (`protocol_version`, whatever was negotiated) or
    /// `absent` (none). docs/antigravity-1.3.0.md §20.
    #[serde(default)]
    pub version_header: mcp_version_header::VersionHeader,
    /// Keep HTTP connections open between requests and reuse them (default false: a
    /// fresh connection per request). How the real harness's HTTP client pools is not
    /// recorded, so both are played.
    #[serde(default)]
    pub keep_alive: bool,
}

impl Default for McpClientScript {
    fn default() -> Self {
        Self {
            protocol_version: harness_protocol_version(),
            call_timeout_ms: default_call_timeout_ms(),
            list_tools_every_prompt: false,
            open_get_stream: false,
            header_on_initialize: false,
            fault: None,
            version_header: mcp_version_header::VersionHeader::default(),
            keep_alive: false,
        }
    }
}

fn harness_protocol_version() -> String {
    "2026-07-28".into()
}

fn default_call_timeout_ms() -> u64 {
    180_000
}

/// Switchable quirks recorded from the real server (docs/antigravity-1.3.0.md §8).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Quirks {
    /// Send each pending host-tool `tool_call` a second time, verbatim, where a
    /// `tool_call_update` would be expected (quirk (a), seen in a 1.1.1 capture). A client
    /// that executed tool calls from ACP updates would run the tool twice.
    #[serde(default)]
    pub resend_pending_tool_call: bool,
    /// Supersede every allowed host call (quirk (b), seen at RC01 on a native edit): the
    /// approved tool call is marked `failed` with `rawOutput` "Tool call was approved but
    /// never executed.", and the work runs under another id, `<sessionId>:<n>`, as a
    /// `tool_call` (`in_progress`, titled `Running <server>_<tool>`, with
    /// `rawInput.arguments` and no `_meta`), then the real MCP `tools/call`, then
    /// `completed` or `failed` under the new id.
    #[serde(default)]
    pub supersede_approved_call: bool,
}

/// The fake's sign-in state at start-up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AuthScript {
    /// `settings.json` has `auth.type` and a token: sessions open at once.
    #[default]
    SignedIn,
    /// Sessions answer -32000 "Authentication required" until `authenticate`
    /// (`oauth-personal`) succeeds, which it does at once (the browser flow "completes").
    Required,
    /// Like `required`, but `authenticate` fails with -32000 "Onboarding failed".
    Refused,
    /// Like `required`, but `authenticate` answers `{}` without signing in, so sessions
    /// keep answering "Authentication required" (a client must not loop on it).
    NeverSatisfied,
    /// As the real server: signed in when `$GEMINI_HOME/antigravity-acp/settings.json`
    /// has `auth.type` and `acp_token.json` exists and has not expired (its
    /// `expiry_date`, epoch milliseconds, if any, is in the future); otherwise like
    /// `required`.
    FromHome,
}

/// One scripted prompt turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TurnScript {
    /// Which prompts this turn answers.
    #[serde(default, rename = "match")]
    pub matcher: PromptMatch,
    /// What the fake does, in order.
    pub steps: Vec<Step>,
    /// The stop reason of the prompt response (default `end_turn`).
    #[serde(default)]
    pub stop: StopScript,
}

/// Which prompts a turn answers.
///
/// A prompt's history grows turn after turn, so several turns may match one prompt. The
/// fake picks the turn whose `prompt_contains` text occurs *latest* in the prompt's text
/// (the newest user message sits at the end); a turn without a matcher matches anything
/// with the lowest priority; ties go to the turn declared first.
///
/// Precisely: the prompt's text is its `text` content blocks concatenated with no
/// separator; "latest" compares where each matcher's last occurrence *ends*. A prompt that
/// matches nothing, in a script with turns, is journaled as `UnmatchedPrompt` and answered
/// with one prose chunk and `end_turn`. A script with no turns echoes every prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptMatch {
    /// Text the prompt must contain.
    #[serde(default)]
    pub prompt_contains: Option<String>,
}

/// The stop reason a turn ends with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopScript {
    /// `end_turn`.
    #[default]
    EndTurn,
    /// `max_tokens`.
    MaxTokens,
    /// `refusal`.
    Refusal,
}

/// One scripted action inside a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// An `agent_message_chunk` with this text (one delta).
    Text(String),
    /// An `agent_thought_chunk` with this text (one delta).
    Thought(String),
    /// Text streamed as the real server streams it: many `agent_message_chunk` deltas of
    /// `code_points` Unicode code points each (default 1), so words, and graphemes made
    /// of several code points (emoji with modifiers, combining accents), are split
    /// across chunks.
    Stream(StreamStep),
    /// Use a host tool through the MCP server given at `session/new`, the way 1.3.0 does:
    /// `tool_call` (pending), `session/request_permission`, then a real MCP `tools/call`,
    /// then `tool_call_update` completed or failed.
    ///
    /// Details: only `http` servers are used, in `session/new` order, connected lazily
    /// (`initialize` and `tools/list` on first use). As on the real server, a session in
    /// `yolo` mode is not asked for permission. If the client denies (or answers
    /// `cancelled`), the tool call is marked `failed` and the turn ends at once with
    /// `end_turn`; each later `expect_result` of the turn is journaled as failed, saying
    /// so. A tool no server has (or no `http` server at all) is journaled as an expectation
    /// failure and the turn goes on, with no result for a later `expect_result`.
    Call(CallStep),
    /// Check the MCP result of the most recent `call` of the same turn (after a
    /// `parallel` group: every result of the group). A mismatch is journaled as an
    /// expectation failure (and the turn goes on).
    ExpectResult(ResultExpectation),
    /// A `usage_update` notification.
    Usage(UsageStep),
    /// Wait until the client sends `session/cancel`; the prompt then answers `cancelled`.
    /// If no cancel arrives within `timeout_ms`, an expectation failure is journaled and
    /// the turn goes on. Lets a scenario test a cancel mid-turn without sleeping.
    /// (Added after the first interface draft; older scripts do not use it.)
    WaitForCancel(WaitForCancelStep),
    /// Several host tool calls issued *concurrently*, each the 1.3.0 way of [`Step::Call`].
    ///
    /// In order: every call is resolved and announced (`tool_call`, pending, with the
    /// bridge `_meta`); then every `session/request_permission` is sent at once and all
    /// answers are awaited; then every allowed call gets its `tool_call_update`
    /// (in_progress) and its MCP `tools/call`, all started before any is awaited, so all
    /// are in flight together; each ends with its own `tool_call_update` (completed or
    /// failed) as its result arrives. A following `expect_result` checks *every* result of
    /// the group (each must satisfy it). A denied or cancelled permission marks that call
    /// `failed` (it is not run); the others still run, and the turn then ends with
    /// `end_turn` after the group, like `call`. In `yolo` mode nobody is asked.
    Parallel(Vec<CallStep>),
    /// A server-owned (non-MCP) tool, as 1.3.0 shows them (docs/antigravity-1.3.0.md §8);
    /// see [`NativeStep`]. With a `path` (or a `signal`) it really acts when it runs. A
    /// tool the session disabled is withheld unless the script says `disabled_tools: ignore`.
    Native(NativeStep),
    /// A native question (docs/antigravity-1.3.0.md §9): a `session/request_permission`
    /// whose tool call id is `interaction_<8 hex>`, titled with the question, one
    /// `allow_once` option per answer (`optionId` "1", "2", …; no `tool_call` update before
    /// or after). The answer (in the journal's `acp_in` frames, and on stderr) is recorded,
    /// whatever it is, and the turn goes on. Questions are asked in every mode, `yolo`
    /// included.
    Question(QuestionStep),
    /// A permission request for an MCP tool of *another* server (no MCP request is made):
    /// a pending `tool_call` whose `_meta.mcp` names `server` and `tool`, then
    /// `session/request_permission` with the allow/deny options. Any answer is recorded
    /// (an adapter that allows it is judged on the wire, not here) and the turn goes on:
    /// an allow "runs" it (`tool_call_update` in_progress, then completed, as the other
    /// server would), a deny or `cancelled` marks it `failed`. In `yolo` mode it runs
    /// without asking.
    ForeignCall(ForeignCallStep),
    /// A request of the server's own to the client, such as `fs/read_text_file` or
    /// `terminal/create` (methods ACP lets an agent call on a client that advertised the
    /// capability), with `sessionId` added to `params`. The client must refuse it with a
    /// JSON-RPC error: a result is journaled as a failed expectation. Either way the turn
    /// goes on.
    ClientRequest(ClientRequestStep),
}

/// A request the fake sends to the client (`client_request:`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientRequestStep {
    /// The method, e.g. `fs/read_text_file`, `fs/write_text_file`, `terminal/create`.
    pub method: String,
    /// The params (a map; `sessionId` is added).
    #[serde(default = "empty_map")]
    pub params: Value,
}

fn empty_map() -> Value {
    Value::Object(serde_json::Map::new())
}

/// A server-owned tool (`native:`).
///
/// With `ask: true` (the default): a `tool_call` titled `Run <tool>?`, status `pending`,
/// with no `_meta.mcp`, then `session/request_permission` with the options `allow`
/// (allow_once), `allow_always` (allow_always, carrying `_meta["agy.security.warning"]`)
/// and `deny` (reject_once). If an allow option is selected, the tool "runs":
/// `tool_call_update` in_progress `Running <tool>`, then completed. If the answer is a
/// deny, `cancelled` or an error, the tool call is marked `failed` (or, with
/// `after_refusal`, in_progress first, then failed or completed) and the turn **goes
/// on** with the next step: unlike a host `call`, a refused native tool does not end the
/// 1.3.0 turn, the model reads the refusal and carries on (answering in prose or trying
/// something else). In `yolo` mode it runs without asking, as with `ask: false`.
///
/// With `ask: false`: it runs without asking, the way 1.3.0 shows native reads: a
/// `tool_call` titled `Running <tool>`, status `in_progress`, then a `tool_call_update`
/// completed.
///
/// When it runs, each real action (the `path`'s read or write, the `signal`) is journaled
/// with its real outcome (`native_action`: `done`, `denied` by the OS, or `failed`), and
/// the completion is `failed` with the OS error's text when one did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NativeStep {
    /// The native tool's name, e.g. `run_command` or `view_file`.
    pub tool: String,
    /// Its ACP `ToolKind` (default `execute`).
    #[serde(default)]
    pub kind: NativeKind,
    /// Whether the server asks permission first (default true).
    #[serde(default = "default_true")]
    pub ask: bool,
    /// The tool call id's format (default `hex`).
    #[serde(default)]
    pub id_format: NativeIdFormat,
    /// A file the tool really acts on when it runs: a `read` reads it (any path, as
    /// 1.3.0's ungated reads do), an `edit` writes `content` to it. A relative path is
    /// taken from the session's cwd. Without it nothing touches disk.
    #[serde(default)]
    pub path: Option<String>,
    /// What an `edit` writes (default empty).
    #[serde(default)]
    pub content: String,
    /// A process the tool really signals when it runs, after acting on `path`:
    /// `parent`, the fake's parent process (the adapter, or the relay in front of the
    /// fake), with `kill(ppid, 0)`, which delivers nothing but is checked by the kernel
    /// like any signal (a Landlock domain scoped for signals refuses it).
    #[serde(default)]
    pub signal: Option<SignalTarget>,
    /// How the tool call ends when its permission is refused or cancelled (default
    /// `failed` at once, as 1.3.0; see [`refused_native::RefusedNative`]).
    #[serde(default)]
    pub after_refusal: refused_native::RefusedNative,
}

/// Whom a native step signals (`signal:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SignalTarget {
    /// The fake's parent process.
    Parent,
}

/// The id formats 1.3.0 uses for its own tool calls (docs/antigravity-1.3.0.md §8).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NativeIdFormat {
    /// 32 hex digits.
    #[default]
    Hex,
    /// `call_<6 digits>`.
    Call,
    /// `<sessionId>:7`.
    Session,
    /// `trajectory:4`.
    Trajectory,
}

fn default_true() -> bool {
    true
}

/// An ACP `ToolKind`, as the `kind` of a native tool call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NativeKind {
    /// `read`.
    Read,
    /// `edit`.
    Edit,
    /// `delete`.
    Delete,
    /// `move`.
    Move,
    /// `search`.
    Search,
    /// `execute` (the default).
    #[default]
    Execute,
    /// `think`.
    Think,
    /// `fetch`.
    Fetch,
    /// `switch_mode`.
    SwitchMode,
    /// `other`.
    Other,
}

impl NativeKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Edit => "edit",
            Self::Delete => "delete",
            Self::Move => "move",
            Self::Search => "search",
            Self::Execute => "execute",
            Self::Think => "think",
            Self::Fetch => "fetch",
            Self::SwitchMode => "switch_mode",
            Self::Other => "other",
        }
    }
}

/// A native question (`question:`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionStep {
    /// The question (the tool call's `title`).
    pub title: String,
    /// The answers offered, in order (at least one).
    pub options: Vec<String>,
}

/// A permission request for another server's MCP tool (`foreign_call:`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForeignCallStep {
    /// The other server's name (`_meta.mcp.server`).
    pub server: String,
    /// Its tool (`_meta.mcp.tool`).
    pub tool: String,
    /// The arguments shown in `rawInput.arguments` (default `{}`).
    #[serde(default = "empty_object")]
    pub args: Value,
    /// `mcp` (default: `_meta.mcp` names `server` and `tool`) or `gemini_cli` (Gemini
    /// CLI's title, id and options, as for a `call`); `omitted` drops `_meta`.
    #[serde(default)]
    pub permission_meta: PermissionMeta,
}

/// A host tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallStep {
    /// The host tool: matched against each MCP tool's `title`, then its `name`.
    pub tool: String,
    /// The arguments sent in `tools/call`.
    #[serde(default = "empty_object")]
    pub args: Value,
    /// What the pending `tool_call` (and its permission request) says about the MCP
    /// tool (default `mcp`: `_meta.mcp` with the server and the tool's MCP name).
    #[serde(default)]
    pub permission_meta: PermissionMeta,
}

/// What a host call's pending `tool_call` carries in `_meta`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PermissionMeta {
    /// `_meta.mcp` = `{server, tool: <the tool's MCP name>}` and `is_mcp_tool_call`, as
    /// recorded.
    #[default]
    Mcp,
    /// No `_meta` at all.
    Omitted,
    /// `_meta.mcp.tool` is the tool's title (else its name) sanitized to
    /// `[A-Za-z0-9_-]` (every other character becomes `_`), not its MCP name.
    SanitizedTitle,
    /// As Gemini CLI 0.61 announces an MCP call: no `_meta`, the title `<MCP name>
    /// (<server> MCP Server)` (on every update of the call), the tool call id
    /// `mcp_<server>_<MCP name>__mcp_<server>_<MCP name>_<unix millis>_0`, and Gemini
    /// CLI's options `proceed_always_server`, `proceed_always_tool` (allow_always),
    /// `proceed_once` (allow_once) and `cancel` (reject_once); any allow runs it.
    GeminiCli,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// What the most recent call's MCP result must look like.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResultExpectation {
    /// The result's `isError` (absent counts as false).
    #[serde(default)]
    pub is_error: Option<bool>,
    /// Text the result's text content must contain.
    #[serde(default)]
    pub contains: Option<String>,
    /// Instead of a result: the call failed without one (transport, HTTP status or
    /// JSON-RPC error, as an MCP client fault may cause) and its failure text contains
    /// this, e.g. `HTTP 401`.
    #[serde(default)]
    pub failed_with: Option<String>,
}

/// Text split into many small deltas (`stream:`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamStep {
    /// The whole text.
    pub text: String,
    /// Code points per chunk (default 1; at least 1).
    #[serde(default = "one")]
    pub code_points: usize,
    /// A pause before every chunk but the first, in milliseconds (default 0: all at
    /// once). The text then streams at this interval, so a segment can outlast a timeout
    /// while no gap between two chunks does. A `session/cancel` during a pause ends the
    /// stream there and the prompt answers `cancelled`.
    #[serde(default)]
    pub interval_ms: u64,
}

fn one() -> usize {
    1
}

/// A `usage_update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageStep {
    /// Tokens in context.
    pub used: u64,
    /// The context window.
    pub size: u64,
}

/// A wait for `session/cancel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForCancelStep {
    /// How long to wait, in milliseconds (default 10000).
    #[serde(default = "default_cancel_wait_ms")]
    pub timeout_ms: u64,
}

fn default_cancel_wait_ms() -> u64 {
    10_000
}
