//! What a real agent can play of a scenario (`dsh-sim run --agent`): each `fake:` key and
//! each step kind is played by the scripted model API, keeps the scenario on the fake, or
//! is irrelevant to a real agent (the agent does what it does, and nothing judges it).
//! This module owns that table ([`FAKE_KEYS`], [`STEP_KINDS`]) and the reasons it gives.
//! `dsh-sim lint` refuses a scenario that uses a fake-only key without a `fake_only`
//! reason, and the runner skips a `fake_only` scenario under `--agent`, naming the key.
//! `scenarios/README.md` ("Real agents") prints the same table.

use fake_antigravity::script::refused_native::RefusedNative;
use fake_antigravity::script::{PermissionMeta, Script, Step};
use serde_json::Value;

use super::Scenario;

/// How a real agent treats a key or step kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentFit {
    /// The scripted model API plays it.
    Played,
    /// Only an ACP server scripted by the project can do it: the scenario stays on the fake.
    FakeOnly,
    /// It shapes the fake only; under a real agent it has no effect and nothing judges it.
    Irrelevant,
}

/// Every top-level `fake:` key, with how a real agent treats it and why.
pub const FAKE_KEYS: &[(&str, AgentFit, &str)] = &[
    (
        "turns",
        AgentFit::Played,
        "the model API plays each turn's steps",
    ),
    ("auth", AgentFit::FakeOnly, "the server's own sign-in state"),
    (
        "quirks",
        AgentFit::FakeOnly,
        "a recorded quirk of 1.3.0's wire",
    ),
    (
        "process",
        AgentFit::FakeOnly,
        "how the server process behaves",
    ),
    (
        "initialize",
        AgentFit::FakeOnly,
        "the server's `initialize` answer",
    ),
    (
        "session_new",
        AgentFit::FakeOnly,
        "the server's `session/new` answer",
    ),
    ("prompt", AgentFit::FakeOnly, "the server's slash commands"),
    (
        "faults",
        AgentFit::FakeOnly,
        "faults in the server's frames",
    ),
    (
        "latency_ms",
        AgentFit::Irrelevant,
        "the agent takes its own time",
    ),
    (
        "models",
        AgentFit::Irrelevant,
        "the agent has its own catalogue",
    ),
    (
        "default_model",
        AgentFit::Irrelevant,
        "the agent has its own catalogue",
    ),
    (
        "mcp_client",
        AgentFit::Irrelevant,
        "the agent has its own MCP client",
    ),
    (
        "turn_usage",
        AgentFit::Irrelevant,
        "the agent reports usage itself",
    ),
    (
        "sign_in",
        AgentFit::Irrelevant,
        "the agent signs in with an API key",
    ),
    (
        "cancel",
        AgentFit::Irrelevant,
        "the agent honours a cancel its own way",
    ),
    (
        "lifecycle",
        AgentFit::Irrelevant,
        "the agent's process lives its own life",
    ),
    (
        "session_close",
        AgentFit::Irrelevant,
        "the agent's own `session/close`",
    ),
    (
        "disabled_tools",
        AgentFit::Irrelevant,
        "the agent disables tools its own way",
    ),
    (
        "planted_secret",
        AgentFit::Irrelevant,
        "only the fake plants a secret",
    ),
];

/// Every step kind of a `fake.turns` turn, with how a real agent treats it and why.
pub const STEP_KINDS: &[(&str, AgentFit, &str)] = &[
    ("text", AgentFit::Played, "a text part"),
    ("thought", AgentFit::Played, "a thought part"),
    ("stream", AgentFit::Played, "text parts over many events"),
    ("usage", AgentFit::Played, "`usageMetadata`"),
    ("call", AgentFit::Played, "a `functionCall` of DSH's tool"),
    (
        "parallel",
        AgentFit::Played,
        "several `functionCall`s in one candidate",
    ),
    (
        "expect_result",
        AgentFit::Played,
        "the `functionResponse` is checked",
    ),
    (
        "native",
        AgentFit::Played,
        "a `functionCall` of the agent's own tool",
    ),
    (
        "wait_for_cancel",
        AgentFit::Played,
        "the stream is held until dropped",
    ),
    (
        "question",
        AgentFit::FakeOnly,
        "a native question of 1.3.0's",
    ),
    (
        "foreign_call",
        AgentFit::FakeOnly,
        "another MCP server's call, as 1.3.0 announces it",
    ),
    (
        "client_request",
        AgentFit::FakeOnly,
        "a request of the server's own to the client",
    ),
    (
        "call.permission_meta",
        AgentFit::FakeOnly,
        "how 1.3.0 announces a call",
    ),
    (
        "parallel.permission_meta",
        AgentFit::FakeOnly,
        "how 1.3.0 announces a call",
    ),
    (
        "expect_result.failed_with",
        AgentFit::FakeOnly,
        "a failure of the fake's MCP client",
    ),
    (
        "native.after_refusal",
        AgentFit::FakeOnly,
        "how the server ends a refused call",
    ),
];

/// The longest start-up of a real agent the runner allows for: a model timeout shorter than
/// this could strike before the agent answers `initialize` (1.3.0 took up to 8.6 s on
/// Windows; Gemini CLI 1.5–4.5 s here), so such a scenario is played on the fake only.
pub const AGENT_START_UP_MS: u64 = 10_000;

/// Why the scenario cannot be played by a real agent: every fake-only key or step it
/// uses, as `` `fake.<key>` (<why>) ``, in table order, each once. Empty: a real agent can
/// play it.
pub fn fake_only_keys(scenario: &Scenario) -> Vec<String> {
    let mut found = fake_keys_used(&scenario.fake);
    for (key, why) in scenario_keys_used(scenario) {
        found.push(format!("`{key}` ({why})"));
    }
    found
}

fn fake_keys_used(script: &Script) -> Vec<String> {
    let (Ok(Value::Object(used)), Ok(Value::Object(default))) = (
        serde_json::to_value(script),
        serde_json::to_value(Script::default()),
    ) else {
        return vec!["`fake` (the script does not serialize)".to_owned()];
    };
    let mut found = Vec::new();
    for (key, fit, why) in FAKE_KEYS {
        if *fit == AgentFit::FakeOnly && used.get(*key) != default.get(*key) {
            found.push(format!("`fake.{key}` ({why})"));
        }
    }
    if script.mcp_client.fault.is_some() {
        found.push("`fake.mcp_client.fault` (a fault of the fake's own MCP client)".to_owned());
    }
    if script.session_close.late_permission.is_some() {
        found.push(
            "`fake.session_close.late_permission` (a request the server makes as it closes)"
                .to_owned(),
        );
    }
    if script.lifecycle.exit_after_sessions.is_some() || script.lifecycle.exit_after_ms.is_some() {
        found.push("`fake.lifecycle.exit_after_*` (the server exits on its own)".to_owned());
    }
    let mut kinds: Vec<&str> = Vec::new();
    for step in script.turns.iter().flat_map(|turn| &turn.steps) {
        let (kind, fake_only) = step_fit(step);
        if fake_only && !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    for (kind, _, why) in STEP_KINDS {
        if kinds.contains(kind) {
            found.push(format!("`fake.turns[].{kind}` ({why})"));
        }
    }
    for kind in kinds
        .iter()
        .filter(|k| !STEP_KINDS.iter().any(|(n, ..)| n == *k))
    {
        found.push(format!("`fake.turns[].{kind}`"));
    }
    found
}

/// A step's kind, and whether it keeps the scenario on the fake.
fn step_fit(step: &Step) -> (&'static str, bool) {
    match step {
        Step::Text(_) => ("text", false),
        Step::Thought(_) => ("thought", false),
        Step::Stream(_) => ("stream", false),
        Step::Usage(_) => ("usage", false),
        Step::WaitForCancel(_) => ("wait_for_cancel", false),
        Step::Native(native) => (
            "native.after_refusal",
            native.after_refusal != RefusedNative::default(),
        ),
        Step::Call(call) => (
            "call.permission_meta",
            call.permission_meta != PermissionMeta::Mcp,
        ),
        Step::Parallel(calls) => (
            "parallel.permission_meta",
            calls
                .iter()
                .any(|c| c.permission_meta != PermissionMeta::Mcp),
        ),
        Step::ExpectResult(expect) => ("expect_result.failed_with", expect.failed_with.is_some()),
        Step::Question(_) => ("question", true),
        Step::ForeignCall(_) => ("foreign_call", true),
        Step::ClientRequest(_) => ("client_request", true),
    }
}

/// The scenario's other parts that only the fake can stand behind.
fn scenario_keys_used(scenario: &Scenario) -> Vec<(&'static str, &'static str)> {
    let mut found = Vec::new();
    if scenario.install.is_some() {
        found.push(("install", "serves an archive of the fake"));
    }
    if scenario.expect.chaos.is_some() {
        found.push(("expect.chaos", "faults drawn against the fake"));
    }
    if scenario.dsh.gemini_home.is_some() {
        found.push(("dsh.gemini_home", "1.3.0's sign-in files"));
    }
    if scenario
        .dsh
        .adapter
        .timeout_ms
        .is_some_and(|ms| ms < AGENT_START_UP_MS)
    {
        found.push((
            "dsh.adapter.timeout_ms",
            "under 10 s, shorter than a real agent's start-up can be (1.3.0: up to 8.6 s)",
        ));
    }
    if !scenario.dsh.leftovers.is_empty() {
        found.push(("dsh.leftovers", "1.3.0's conversation files"));
    }
    found
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parse(yaml: &str) -> Scenario {
        crate::scenario::parse(yaml, std::path::Path::new("t.yaml")).unwrap()
    }

    #[test]
    fn a_played_script_has_no_fake_only_key() {
        let scenario = parse(
            "name: n\ncovers: []\nfake:\n  latency_ms: { prompt: 5 }\n  turns:\n    - match: {}\n      steps:\n        - text: hi\n        - call: { tool: read_file }\n        - expect_result: { contains: x }\ndsh:\n  chat:\n    - user: hi\n",
        );
        assert_eq!(fake_only_keys(&scenario), Vec::<String>::new());
    }

    #[test]
    fn each_fake_only_key_and_step_is_named() {
        let scenario = parse(
            "name: n\ncovers: []\nfake:\n  quirks: { resend_pending_tool_call: true }\n  turns:\n    - match: {}\n      steps:\n        - question: { title: q, options: [a] }\n        - call: { tool: t, permission_meta: omitted }\ndsh:\n  chat:\n    - user: hi\n",
        );
        let keys = fake_only_keys(&scenario).join("; ");
        assert!(keys.contains("`fake.quirks`"), "{keys}");
        assert!(keys.contains("`fake.turns[].question`"), "{keys}");
        assert!(keys.contains("call.permission_meta"), "{keys}");
    }

    #[test]
    fn every_script_key_is_in_the_table() {
        let Value::Object(default) = serde_json::to_value(Script::default()).unwrap() else {
            panic!("a script serializes to a map");
        };
        for key in default.keys() {
            assert!(
                FAKE_KEYS.iter().any(|(name, ..)| name == key),
                "fake.{key} is not classified in agent_fit::FAKE_KEYS"
            );
        }
    }
}
