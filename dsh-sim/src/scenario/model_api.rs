//! `expect.model_api`: what the scripted model API must have been sent by a real agent
//! (`dsh-sim run --agent`). Judged from the model API's journal, so it holds for any
//! agent that talks the Gemini API; against the fake it is not judged (the fake has no
//! model API). The judge is `runner/judge/model_api.rs`.

use schemars::JsonSchema;
use serde::Deserialize;

/// Checks on the requests a real agent sent to the model API.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelApiExpectation {
    /// Texts that must each reach the model in a user content of some request (the
    /// user's words, carried in the adapter's prompt).
    #[serde(default)]
    pub user_text: Vec<String>,
    /// Texts that must each reach the model inside a `functionResponse` part (a DSH
    /// tool's result, or DSH's denial), in any request.
    #[serde(default)]
    pub tool_results: Vec<String>,
    /// DSH's tools that must be declared to the model, by DSH name: each must appear
    /// among the declarations under the bridge's hashed name (`<name>_<12 hex>`, with
    /// any prefix the agent adds), and no other bridge tool may be declared.
    #[serde(default)]
    pub declared_tools: Option<Vec<String>>,
    /// No native tool that the session disabled is declared to the model: none of the
    /// agent's own tools the runner turned off (judged only where the agent honours the
    /// disabling; the runner says when it does not).
    #[serde(default)]
    pub no_disabled_native_tools: bool,
    /// The adapter's instruction to use only DSH's tools reaches the model in a user
    /// content.
    #[serde(default)]
    pub only_dsh_tools_instruction: bool,
}
