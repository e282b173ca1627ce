//! A real ACP agent under test (`dsh-sim run --agent`): Gemini CLI (`gemini --acp`), run
//! here offline, or Google's 1.3.0 build in the nightly. The model service sits outside the
//! system, so it is scripted ([`fake_gemini_api`], started per scenario on loopback and
//! playing the scenario's `fake.turns`); the agent is real. This module owns what differs
//! per agent ([`AgentKind`]: its native tools, its private home, whether it offers a
//! `model` config option) and a run's set-up ([`AgentRun`]): the model API, the agent's
//! private home signed in with an API key, and the variables handed to it through its
//! server command's own `env` (the adapter's allowlist is not widened).
//!
//! - [`agent_kind`]: what differs per agent, and what it cannot play;
//! - [`agent_run`]: one scenario's run (the model API, the home, the variables);
//! - [`model_script`]: a scenario's `fake.turns` as the model API's script;
//! - [`as_judged`]: what is judged differently under a real agent.

pub mod agent_kind;
pub mod agent_run;
pub mod as_judged;
pub mod model_script;

pub use agent_kind::{AgentKind, GEMINI_CLI_NATIVE_TOOLS, RealAgent, pinned_gemini_cli};
pub use agent_run::{AgentRun, keep_journal};
pub use as_judged::{fake_journal_checks_dropped, judge_by_meaning, skip_reason};
