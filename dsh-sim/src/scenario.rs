//! The scenario format: one YAML file holding both peers' scripts (the fake server's
//! `fake:` and DSH's `dsh:`), the expectations, and the claims the scenario covers.
//!
//! Every struct denies unknown fields, so a typo is an error that names its file, line
//! and column ([`load`]). `scenarios/README.md` documents every key for contributors.

pub mod agent_fit;
mod chaos;
mod claim_id;
mod conversations;
mod dsh_fault;
mod error_code_schema;
mod files;
mod finish;
mod install;
mod load;
mod model_api;
mod platforms;
mod schema;
mod validation;

use std::collections::{BTreeMap, BTreeSet};

use antigravity_acp::contract::LlmErrorCode;

use fake_antigravity::script::Script;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use validation::Check;

pub use chaos::{CHAOS_SIMULATOR_ONLY, ChaosExpectation};
pub use claim_id::{ClaimId, all_claim_ids, is_claim_id};
pub use conversations::{LedgerOwner, MAX_PLANTED_SESSIONS, PlantedLedger};
pub use dsh_fault::DshFault;
pub use files::{ConfinementKnob, FileCheck, WORKSPACE_PLACEHOLDER, WorkspacePath};
pub use finish::FinishKind;
pub use install::{
    ArchiveKind, CacheStep, InstallExpectation, InstallFault, InstallOutcomeKind, InstallScript,
    KillStep, PinKind, RegistryDigest, RegistryKind, ServeKind,
};
pub use load::{ScenarioError, load, parse};
pub use model_api::ModelApiExpectation;
pub use platforms::{Platforms, System, not_run_here};
pub use schema::{SCHEMA_FILE_NAME, SCHEMA_LINE_PREFIX, scenario_schema_json};

/// `path` with `/` between its parts on every system, as scenarios, proofs and the files
/// the runner reports are named (so a name reads the same on Windows).
pub fn slash_path(path: &std::path::Path) -> String {
    path.components()
        .map(|part| part.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// A whole scenario file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What the scenario shows, in a sentence.
    pub name: String,
    /// The claim IDs (`C01`..`C73`, `B01`..`B10`) this scenario proves.
    pub covers: Vec<ClaimId>,
    /// Set while the scenario reproduces a bug that is not fixed yet: why it fails and
    /// where the fix is tracked. The runner then reports its failure as XFAIL (not a
    /// failure) and its passing as a failure (XPASS), so the marker goes with the fix.
    #[serde(default, deserialize_with = "validation::known_failure")]
    pub known_failure: Option<String>,
    /// Set when a real agent cannot play the scenario (`dsh-sim run --agent`, and the
    /// nightly's real build): why, in one line. Absent: the scripted model API plays its
    /// `fake.turns` against the agent, and `dsh-sim lint` refuses it if it uses a key that
    /// only the fake can play ([`agent_fit`]'s table). `--server` without `--agent` runs it
    /// too, against a server whose model the runner does not script.
    #[serde(default, deserialize_with = "validation::reason")]
    pub fake_only: Option<String>,
    /// The bound on the whole chat, in seconds, for a scenario that needs longer than
    /// the runner's default (10 s against the fake; `dsh-sim run --timeout` sets it).
    /// The longer of the two applies.
    #[serde(default, deserialize_with = "validation::time_bound_secs")]
    pub time_bound_secs: Option<u64>,
    /// The fake server's script, exactly `fake_antigravity::script::Script`.
    #[serde(default, deserialize_with = "validation::checked_script")]
    pub fake: Script,
    /// The registry and cache the server is installed from; absent: the adapter runs the
    /// fake as a command.
    #[serde(default)]
    pub install: Option<InstallScript>,
    /// What DSH does: its tools, saved model, system prompt and the user's messages.
    #[serde(deserialize_with = "validation::checked")]
    pub dsh: DshScript,
    /// What must hold at the end.
    #[serde(default, deserialize_with = "validation::checked")]
    pub expect: Expectations,
    /// Set when the scenario uses a DSH point only dsh-sim's loop has (dropping the
    /// stream, leaving tool calls parked, an install judged on the installer's events):
    /// why. `dsh-sim run --real-loop` (DSH's own agent loop in Node) skips it, naming the
    /// reason; everything else runs under both loops.
    #[serde(default)]
    pub simulator_only: Option<String>,
    /// Set when the scenario cannot hold on every system DSH runs on: the systems it
    /// holds on and why. Elsewhere it is reported as not run, never as a pass.
    #[serde(default, deserialize_with = "validation::checked_option")]
    pub platforms: Option<Platforms>,
    /// Set when the scenario's sessions deliberately outlive the run on disk: why. The
    /// after-run B08 check then does not count their conversation files as leftovers
    /// (another client's files, the credentials and planted ledgers are still judged).
    #[serde(default, deserialize_with = "conversations::leaves_conversations")]
    pub leaves_conversations: Option<String>,
}

/// DSH's side of a scenario.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DshScript {
    /// The chat's saved model choice (a full DSH id such as
    /// `antigravity-acp/gemini-3.8-flash-low`); absent means a fresh chat.
    #[serde(default)]
    pub model: Option<String>,
    /// DSH's `maxTokens` on every request of the chat (an output cap the adapter enforces;
    /// default: none).
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// DSH's system prompt (default: a short fixed one).
    #[serde(default)]
    pub system: Option<String>,
    /// The tools DSH offers, with DSH's permission policy and behaviour for each.
    #[serde(default, deserialize_with = "validation::checked_each")]
    pub tools: Vec<ToolSpec>,
    /// The user's messages, in order; each starts an agent-loop run.
    pub chat: Vec<ChatEntry>,
    /// Adapter settings for this scenario (default: the adapter's defaults).
    #[serde(default)]
    pub adapter: AdapterKnobs,
    /// Variables added to the host environment the adapter launches servers from (a
    /// planted secret, for example); the real environment is kept underneath.
    #[serde(default)]
    pub environment: BTreeMap<String, String>,
    /// A fresh `GEMINI_HOME` for the servers, made by the runner with the sign-in files
    /// the real server reads at start-up (default: none is made, `GEMINI_HOME` is left
    /// as it is).
    #[serde(default)]
    pub gemini_home: Option<GeminiHomeSpec>,
    /// Ask the adapter for its models (`listModels`, whose first call discovers the
    /// server's catalogue) before the chat starts.
    #[serde(default)]
    pub list_models: bool,
    /// Files planted in the scenario's workspace before the chat (path relative to it:
    /// content), outside every path a confined server may reach; a fake native step names
    /// them as `{workspace}/<path>`.
    #[serde(default)]
    pub files: BTreeMap<WorkspacePath, String>,
    /// One fault of DSH's during the chat (`{kind, ...}`; see [`DshFault`]); default
    /// none.
    #[serde(default)]
    pub fault: Option<DshFault>,
    /// Session ledgers of other DSH processes planted before the provider starts, as a
    /// crash (`owner: dead`) or a live process (`owner: live`) left them, each with
    /// `sessions` sessions' conversation files in the `GEMINI_HOME` (B08's sweep).
    #[serde(default, deserialize_with = "validation::checked_each")]
    pub leftovers: Vec<PlantedLedger>,
}

/// The sign-in files of a fresh `GEMINI_HOME` (`antigravity-acp/settings.json` and
/// `antigravity-acp/acp_token.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GeminiHomeSpec {
    /// `auth.type` in `settings.json` (absent: no `settings.json`).
    #[serde(default)]
    pub auth_type: Option<String>,
    /// The token file.
    #[serde(default)]
    pub token: HomeToken,
}

/// The token file of a [`GeminiHomeSpec`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HomeToken {
    /// No token file.
    #[default]
    Absent,
    /// A token that expires in an hour.
    Valid,
    /// A token that expired an hour ago.
    Expired,
}

/// The adapter settings a scenario may change, to reach timeouts in milliseconds rather
/// than minutes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdapterKnobs {
    /// `AdapterConfig::timeout`: bounds each active model segment.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// `AdapterConfig::tool_timeout`: bounds how long a parked call waits for DSH.
    #[serde(default)]
    pub tool_timeout_ms: Option<u64>,
    /// `AdapterConfig::sign_in_timeout`: bounds the server's browser sign-in.
    #[serde(default)]
    pub sign_in_timeout_ms: Option<u64>,
    /// `AdapterConfig::idle_process_timeout`: how long a pooled process may stay idle.
    #[serde(default)]
    pub idle_process_timeout_ms: Option<u64>,
    /// `AdapterConfig::max_idle_processes`: how many idle processes the pool keeps.
    #[serde(default)]
    pub max_idle_processes: Option<usize>,
    /// `AdapterConfig::max_sessions_per_process`: sessions one process may create.
    #[serde(default)]
    pub max_sessions_per_process: Option<usize>,
    /// `AdapterConfig::max_active_turns`: tool turns active at once before `busy`.
    #[serde(default)]
    pub max_active_turns: Option<usize>,
    /// `AdapterConfig::extra_disabled_tools`: tool names every session disables on top
    /// of the server's built-in ones.
    #[serde(default)]
    pub extra_disabled_tools: Vec<String>,
    /// `AdapterConfig::confinement` (default: the runner's, `best_effort` unless
    /// `--confinement` says otherwise).
    #[serde(default)]
    pub confinement: Option<ConfinementKnob>,
    /// `AdapterConfig::landlock_abi_ceiling`, a test setting: act as if the kernel offered
    /// at most this Landlock ABI (`0`: a kernel without Landlock).
    #[serde(default)]
    pub landlock_abi_ceiling: Option<u8>,
    /// `AdapterConfig::shutdown_grace`: how long a server has to exit after SIGTERM
    /// before SIGKILL.
    #[serde(default)]
    pub shutdown_grace_ms: Option<u64>,
    /// `AdapterConfig::auth_method` (the plugin's `authMethod`): the only method the
    /// adapter signs in with (default `oauth-personal`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub auth_method: Option<antigravity_acp::AuthMethod>,
    /// `AdapterConfig::agent_profile` (the plugin's `agentProfile`): `auto` (default: the
    /// agent `initialize` names), `antigravity` or `gemini-cli`, whose way of naming a
    /// bridge call the adapter trusts (C21).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub agent_profile: Option<antigravity_acp::AgentProfileChoice>,
}

impl AdapterKnobs {
    /// Sets the pool and active-turn settings a scenario names.
    pub fn apply_lifecycle(&self, config: &mut antigravity_acp::AdapterConfig) {
        if let Some(ms) = self.idle_process_timeout_ms {
            config.idle_process_timeout = std::time::Duration::from_millis(ms);
        }
        if let Some(n) = self.max_idle_processes {
            config.max_idle_processes = n;
        }
        if let Some(n) = self.max_sessions_per_process {
            config.max_sessions_per_process = n;
        }
        if let Some(n) = self.max_active_turns {
            config.max_active_turns = n;
        }
        if let Some(mode) = self.confinement {
            config.confinement = mode.into();
        }
        if let Some(ceiling) = self.landlock_abi_ceiling {
            config.landlock_abi_ceiling = Some(ceiling);
        }
        if let Some(method) = self.auth_method {
            config.auth_method = method;
        }
        if let Some(choice) = self.agent_profile {
            config.agent_profile = choice;
        }
        if let Some(ms) = self.shutdown_grace_ms {
            config.shutdown_grace = std::time::Duration::from_millis(ms);
        }
    }
}

/// One entry of the chat.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatEntry {
    /// What the user says.
    pub user: String,
    /// When the user presses stop during this run (default: never).
    #[serde(default)]
    pub abort: Option<AbortPoint>,
    /// Start a different chat (empty history) with this message, on the same adapter.
    #[serde(default)]
    pub new_chat: bool,
    /// With `new_chat`: the new chat offers no tools (its requests are requests without
    /// tools).
    #[serde(default)]
    pub without_tools: bool,
    /// Before this message, wait (bounded by the chat's time bound) until this many
    /// server processes have journaled their exit: an idle process that expired or died.
    #[serde(default)]
    pub await_exits: Option<usize>,
    /// With `new_chat`: the new chat offers only these of `dsh.tools`, by name (default:
    /// all of them), so a later turn can offer changed tool schemas (C35).
    #[serde(default)]
    pub offer_tools: Option<Vec<String>>,
    /// The message starts with an image (a 1x1 PNG DSH's attachment store resolved), then
    /// this text. dsh-sim's loop only: a scenario using it says `simulator_only`.
    #[serde(default)]
    pub after_image: bool,
}

/// Where DSH aborts a run (cancels the run's abort signal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AbortPoint {
    /// At the first block delta, as DSH's loop does: DSH cancels the run's signal, asks
    /// for one more chunk, throws on it unread and closes the stream; the run ends
    /// aborted (`ABORTED`) with the adapter's finish never taken.
    OnFirstDelta,
    /// When a generation finishes with tool calls: DSH runs none of them, records each
    /// as an error result (DSH's "Error: tool call aborted before dispatch") and ends the
    /// run.
    OnToolCalls,
    /// When a generation finishes with tool calls: DSH runs none of them, records each
    /// as an error result ("Error: tool call aborted before dispatch") and ends the run, but never cancels
    /// the run's abort signal: only the next message (which supersedes the parked
    /// exchange) can end the turn. Nothing is judged about that turn after this run.
    LeaveToolCalls,
    /// At the first block delta DSH drops the stream (an early return, the abort signal
    /// never cancelled) and ends the run: dropping it alone must end the turn.
    DropOnFirstDelta,
    /// At the first block delta DSH cancels the run's signal and reads the stream on to
    /// its terminal item: a caller of `ctx.llm.stream` that reads on (DSH's own loop
    /// does not: see `on_first_delta`), so what the adapter sends after a cancel is judged.
    OnFirstDeltaReadingOn,
}

/// A DSH tool: its definition, DSH's permission for it, and what running it yields.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// DSH's name for the tool.
    pub name: String,
    /// What the tool does (default: empty).
    #[serde(default)]
    pub description: String,
    /// The JSON Schema of its arguments (default: any object).
    #[serde(default = "any_object_schema")]
    pub schema: Value,
    /// DSH's permission policy for the tool (default `allow`).
    #[serde(default)]
    pub permission: Permission,
    /// The output an allowed execution returns (any value; default the string `ok`).
    #[serde(default)]
    pub result: Option<Value>,
    /// When set, an allowed execution fails with this text (`is_error: true`).
    #[serde(default)]
    pub error: Option<String>,
    /// How long an allowed execution takes, in milliseconds (a slow tool; default 0).
    #[serde(default)]
    pub delay_ms: u64,
    /// The chat's first execution of this tool returns only once the fake has journaled
    /// this many answers to its MCP `tools/call` (over all its processes), or after
    /// [`crate::host::dsh_fault::HOLD_BOUND`]: an event to wait on instead of a time, e.g. so
    /// that every call of a burst reaches the bridge before DSH answers the first
    /// (`mcp_client/fault_burst`: the 65th call's refusal is the one answer). Default none.
    #[serde(default)]
    pub hold_until_fake_answers: Option<usize>,
    /// Instead of `result`: running the tool starts a subagent, a nested chat through the
    /// same adapter with this user message and the chat's other tools, while the parent's
    /// call stays parked. The subagent's final answer is the tool's output.
    #[serde(default)]
    pub subagent: Option<String>,
    /// Instead of `result`: running the tool makes a title request (`purpose: title`, no
    /// tools) through the same adapter with this user message; the title is the output.
    #[serde(default)]
    pub title_request: Option<String>,
}

fn any_object_schema() -> Value {
    serde_json::json!({ "type": "object" })
}

/// DSH's permission policy for one tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Permission {
    /// DSH runs the tool.
    #[default]
    Allow,
    /// DSH refuses to run it; the result is an error.
    Deny,
    /// DSH asks the user (its approval service, `tools/pre-execute` answering `ask`), who
    /// approves once: DSH runs the tool.
    AskApproved,
    /// DSH asks the user, who rejects the call: DSH does not run it, and the result is
    /// DSH's error `the user rejected tool "<name>"`.
    AskRejected,
}

impl Permission {
    /// Whether DSH runs a call under this permission.
    pub fn runs(self) -> bool {
        matches!(self, Self::Allow | Self::AskApproved)
    }
}

/// What must hold once every chat message has run.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// The kind of the last run's finish: `stop`, `tool-calls`, `max-tokens`, `aborted`
    /// or `error` (default: every run ends with a finish that is not `error`).
    #[serde(default)]
    pub finish: Option<FinishKind>,
    /// The code of the failure the last run's `error` (or `aborted`) finish carries, a
    /// DSH string such as `ACP_TIMEOUT`.
    #[serde(default)]
    #[schemars(schema_with = "error_code_schema::llm_error_code")]
    pub error: Option<LlmErrorCode>,
    /// Text the message of that failure must contain.
    #[serde(default)]
    pub error_message_contains: Option<String>,
    /// The model (`provider/model`) DSH put in every stream request (by DSH's precedence).
    #[serde(default)]
    pub model: Option<String>,
    /// The number of `generate` calls over the whole chat.
    #[serde(default)]
    pub generations: Option<usize>,
    /// How often DSH executed each tool (tools not named are not checked).
    #[serde(default)]
    pub executions: BTreeMap<String, u32>,
    /// The visible text of the last generation (its text blocks joined).
    #[serde(default)]
    pub final_text: Option<String>,
    /// Each generation's stream, summarised one line per block (see the README).
    #[serde(default)]
    pub streams: Option<Vec<Vec<String>>>,
    /// Checks on what crossed the wire, judged from the fake's journal.
    #[serde(default)]
    pub wire: Option<WireExpectations>,
    /// Checks on what the scripted model API was sent, judged only under a real agent
    /// (`dsh-sim run --agent`); see [`ModelApiExpectation`].
    #[serde(default)]
    pub model_api: Option<ModelApiExpectation>,
    /// Checks on the install (with an `install:` section).
    #[serde(default)]
    pub install: Option<InstallExpectation>,
    /// The models the adapter lists (`listModels`) once the chat ran, in order, as
    /// `provider/model`.
    #[serde(default)]
    pub models_listed: Option<Vec<String>>,
    /// The context window `resolveModel` reports for the chat's model once the chat ran
    /// (learned from the server's `usage_update`; absent until one was seen).
    #[serde(default)]
    pub context_window: Option<u64>,
    /// Checks on the real filesystem after the run, by path relative to the scenario's
    /// workspace: whether it `exists`, and its exact `content`.
    #[serde(default)]
    pub files: BTreeMap<WorkspacePath, FileCheck>,
    /// Judge the scenario by the chaos invariants instead of the keys above (which are
    /// then not judged); see [`ChaosExpectation`].
    #[serde(default)]
    pub chaos: Option<ChaosExpectation>,
}

/// Checks on the fake's journal: what the adapter really sent and answered.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WireExpectations {
    /// How many server processes started.
    #[serde(default)]
    pub processes: Option<usize>,
    /// Per server process, in start order: how many `session/new` it got (pool reuse).
    #[serde(default)]
    pub sessions_per_process: Option<Vec<usize>>,
    /// Per `session/prompt`, in order: texts it must not contain (nothing of another
    /// conversation).
    #[serde(default)]
    pub prompts_lack: Option<Vec<Vec<String>>>,
    /// Per server process, in start order: every method the client sent (requests and
    /// notifications), in order.
    #[serde(default)]
    pub acp_methods: Option<Vec<Vec<String>>>,
    /// How often each method was sent by the client, over all processes (methods not
    /// named are not checked; `0` asserts absence).
    #[serde(default)]
    pub method_counts: BTreeMap<String, usize>,
    /// How often the server sent each `session/update` kind (`tool_call`,
    /// `agent_message_chunk`, ...), over all processes (kinds not named are not checked).
    #[serde(default)]
    pub update_counts: BTreeMap<String, usize>,
    /// How many `session/prompt` requests were sent in all.
    #[serde(default)]
    pub prompts: Option<usize>,
    /// Per `session/prompt`, in order: texts its prompt must contain.
    #[serde(default)]
    pub prompts_contain: Option<Vec<Vec<String>>>,
    /// The values of every `session/set_config_option` with `configId: model`, in order
    /// (`[]`: the server's own default was kept).
    #[serde(default)]
    pub models_selected: Option<Vec<String>>,
    /// The `methodId` of every `authenticate`, in order.
    #[serde(default)]
    pub authenticate: Option<Vec<String>>,
    /// The client capabilities every `initialize` advertised.
    #[serde(default)]
    pub client_capabilities: Option<CapabilityExpectation>,
    /// What every `session/new` carried as `mcpServers`.
    #[serde(default)]
    pub mcp_servers: Option<McpServersExpectation>,
    /// The client's answers to `session/request_permission`, in order: the selected
    /// `optionId`, or `cancelled`.
    #[serde(default)]
    pub permission_answers: Option<Vec<String>>,
    /// How many MCP `tools/call` requests the server made.
    #[serde(default)]
    pub mcp_tool_calls: Option<usize>,
    /// The outcome of every MCP `tools/call`, in order.
    #[serde(default)]
    pub mcp_tool_results: Option<Vec<McpResultKind>>,
    /// Per server process in start order, why it exited as it journaled: `stdin closed`
    /// (the client closed the ACP connection), `signal`, `error: …`, or `none` (it journaled
    /// no exit: killed).
    #[serde(default)]
    pub exits: Option<Vec<String>>,
    /// `{ tool: text }`: every MCP `tools/call` of DSH's tool (by its DSH name or the
    /// bridge's exported `<name>_<12 hex>`) got a result whose text
    /// contains `text`, and there was at least one (results paired with their calls, so
    /// parallel calls are checked one by one).
    #[serde(default)]
    pub mcp_results_contain: std::collections::BTreeMap<String, String>,
    /// Every MCP exchange the server had with a host MCP server, over all processes in
    /// order, as `<method> ok` or `<method> failed` (`initialize`,
    /// `notifications/initialized`, `GET` for a server stream, `tools/list`, `tools/call`).
    #[serde(default)]
    pub mcp_exchanges: Option<Vec<String>>,
    /// The tool names of every successful MCP `tools/list` answer, over all processes in
    /// order (one list per answer), e.g. `[[read_file], [write_file]]`: what each bridge
    /// offered.
    #[serde(default)]
    pub mcp_tools_listed: Option<Vec<Vec<String>>>,
    /// Whether every server ran in a directory under the adapter's scratch root.
    #[serde(default)]
    pub private_cwd: Option<bool>,
    /// Variable names no server process may receive (a planted secret).
    #[serde(default)]
    pub env_absent: Vec<String>,
    /// Variable names every server process must receive.
    #[serde(default)]
    pub env_present: Vec<String>,
    /// Every `session/new`, `session/load` and `session/resume` the client sent (model
    /// discovery's included) carried exactly these names, in this order, as
    /// `_meta.agy.disabledTools`; and at least one session was opened.
    #[serde(default)]
    pub disabled_tools: Option<Vec<String>>,
    /// The tool of every `native` step the fake withheld (its session disabled the tool
    /// and the fake honours that), over all processes in order (`[]`: none withheld).
    #[serde(default)]
    pub native_steps_withheld: Option<Vec<String>>,
    /// Every real action of the fake's native tools over all processes, in order, as
    /// `<action> <outcome>`: action `read`, `write` or `signal`; outcome `done`,
    /// `denied` (the OS refused it, as the kernel's confinement does) or `failed`
    /// (another error). `[]` asserts that no native action ran.
    #[serde(default)]
    pub native_actions: Option<Vec<String>>,
    /// Texts no ACP frame, either way, of any server process may contain (a planted
    /// secret the server must never have read, so never sent).
    #[serde(default)]
    pub frames_lack: Vec<String>,
    /// The outcome of every MCP `tools/call`, in any order (compared as a multiset: for
    /// calls whose order is the scheduler's, such as one request sent twice at once).
    #[serde(default)]
    pub mcp_tool_results_any_order: Option<Vec<McpResultKind>>,
    /// Every slash command the fake found in a prompt and ran (under
    /// `fake.prompt.slash_commands`), over all processes in order, as `/<name>`
    /// (`[]`: none; the credentials a `/logout` would clear are judged on disk anyway).
    #[serde(default)]
    pub slash_commands: Option<Vec<String>>,
    /// Every write of the server's `settings.json`, over all processes in order, as
    /// `<auth.type or none> by <writer>` (`gemini-api-key by authenticate`, `none by
    /// logout`; `[]`: none): an API-key user stays an API-key user.
    #[serde(default)]
    pub settings_written: Option<Vec<String>>,
}

/// The client capabilities `initialize` must advertise.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapabilityExpectation {
    /// Whether any filesystem capability (`readTextFile`, `writeTextFile`) is on.
    #[serde(default)]
    pub fs: Option<bool>,
    /// Whether the terminal capability is on.
    #[serde(default)]
    pub terminal: Option<bool>,
}

/// What `session/new` carries as MCP servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpServersExpectation {
    /// Exactly one `http` server on `http://127.0.0.1:<port>/mcp` with exactly one
    /// header, `Authorization: Bearer <token>`. The token must be 64 hex digits where
    /// the journal shows it; the fake's journal shows `Bearer <redacted len=64 hex fp=…>`.
    /// A token must be fresh per turn: no two server processes may get the same one.
    Bridge,
    /// No MCP server at all.
    None,
}

/// How an MCP `tools/call` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpResultKind {
    /// A result without `isError: true`.
    Ok,
    /// A result with `isError: true`.
    Error,
    /// No result: a transport or JSON-RPC error.
    Failed,
}

impl std::fmt::Display for McpResultKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Ok => "ok",
            Self::Error => "error",
            Self::Failed => "failed",
        })
    }
}

impl Check for ToolSpec {
    fn check(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("a tool needs a non-empty `name`".to_owned());
        }
        if self.result.is_some() && self.error.is_some() {
            return Err(format!(
                "tool `{}` sets both `result` and `error`; choose one",
                self.name
            ));
        }
        Ok(())
    }
}

impl Check for DshScript {
    fn check(&self) -> Result<(), String> {
        if self.chat.is_empty() {
            return Err("`dsh.chat` needs at least one `user` message".to_owned());
        }
        let mut names = BTreeSet::new();
        for tool in &self.tools {
            if !names.insert(tool.name.as_str()) {
                return Err(format!("tool `{}` is declared twice", tool.name));
            }
        }
        Ok(())
    }
}

impl Check for Expectations {
    fn check(&self) -> Result<(), String> {
        if let (Some(finish), Some(_)) = (self.finish, self.error)
            && !matches!(finish, FinishKind::Error | FinishKind::Aborted)
        {
            return Err(format!(
                "`expect.error` names a failure, but `finish: {}` carries none (use `error` or `aborted`)",
                finish.name()
            ));
        }
        Ok(())
    }
}
