//! The fake's script: what the scripted server does, turn by turn. Parsed strictly: an
//! unknown key or a wrong type is an error (scenarios embed this under `fake:`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// Process lifecycle switches: a start-up delay, exiting on its own while idle.
    #[serde(default)]
    pub lifecycle: crate::lifecycle::LifecycleScript,
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
    /// see [`NativeStep`]. Nothing is ever done on disk.
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
}

/// A server-owned tool (`native:`).
///
/// With `ask: true` (the default): a `tool_call` titled `Run <tool>?`, status `pending`,
/// with no `_meta.mcp`, then `session/request_permission` with the options `allow`
/// (allow_once), `allow_always` (allow_always, carrying `_meta["agy.security.warning"]`)
/// and `deny` (reject_once). If an allow option is selected, the tool "runs":
/// `tool_call_update` in_progress `Running <tool>`, then completed. If the answer is a
/// deny, `cancelled` or an error, the tool call is marked `failed` and the turn **goes
/// on** with the next step: unlike a host `call`, a refused native tool does not end the
/// 1.3.0 turn, the model reads the refusal and carries on (answering in prose or trying
/// something else). In `yolo` mode it runs without asking, as with `ask: false`.
///
/// With `ask: false`: it runs without asking, the way 1.3.0 shows native reads: a
/// `tool_call` titled `Running <tool>`, status `in_progress`, then a `tool_call_update`
/// completed.
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
