//! The model API's judge, under a real agent (`dsh-sim run --agent`): from the scripted
//! model API's journal, every request the script did not cover, every `expect_result`
//! that did not hold, an agent that never called the model, and `expect.model_api` (what
//! the model was sent: the user's text, the tool results, the declared tools, the
//! adapter's instruction). It reads the journal only; it knows nothing of the adapter.

use fake_gemini_api::JournalEntry;
use fake_gemini_api::journal::{ApiMethod, PartKind, RequestEntry};

use crate::scenario::ModelApiExpectation;

/// The words of the adapter's instruction to use only DSH's tools that the model must
/// receive (judged from outside: a copy, not the adapter's constant).
pub const ONLY_DSH_TOOLS_WORDS: &str = "Do not use any built-in tool of your own";

/// What the judge needs besides the journal.
pub struct ModelApiRun<'a> {
    /// The journal, in order.
    pub journal: &'a [JournalEntry],
    /// Whether the scenario scripts any turn (else the model API echoes).
    pub scripted: bool,
    /// Whether the chat was expected to reach the model at all.
    pub expects_model: bool,
    /// The agent's own tools the runner turned off.
    pub disabled_natives: &'a [String],
    /// Whether the agent honours that turning off.
    pub honours_disabling: bool,
}

/// Every failure found.
pub fn judge(run: &ModelApiRun<'_>, expect: Option<&ModelApiExpectation>) -> Vec<String> {
    let mut failures = Vec::new();
    for entry in run.journal {
        match entry {
            JournalEntry::Unscripted { seq, reason } => failures.push(format!(
                "the model API got a request its script does not cover (request {seq}): {reason}"
            )),
            JournalEntry::ExpectationFailed {
                seq,
                turn,
                step,
                reason,
            } => failures.push(format!(
                "the model API's turn {turn}, step {step} (request {seq}): {reason}"
            )),
            _ => {}
        }
    }
    let main: Vec<&RequestEntry> = main_requests(run.journal);
    if run.scripted && run.expects_model && main.is_empty() {
        failures.push("the agent never called the model API (no model request)".to_owned());
    }
    let Some(expect) = expect else {
        return failures;
    };
    for text in &expect.user_text {
        if !main
            .iter()
            .any(|r| user_texts(r).any(|t| t.contains(text.as_str())))
        {
            failures.push(format!(
                "expect.model_api.user_text: {text:?} reached the model in no user content"
            ));
        }
    }
    for text in &expect.tool_results {
        let found = main
            .iter()
            .flat_map(|r| &r.contents)
            .flat_map(|c| &c.parts)
            .any(|p| {
                p.kind == PartKind::FunctionResponse
                    && p.response
                        .as_ref()
                        .is_some_and(|v| v.to_string().contains(text.as_str()))
            });
        if !found {
            failures.push(format!(
                "expect.model_api.tool_results: {text:?} is in no functionResponse the model got"
            ));
        }
    }
    if let Some(tools) = &expect.declared_tools {
        failures.extend(judge_declared(&main, tools));
    }
    if expect.no_disabled_native_tools && run.honours_disabling {
        for request in &main {
            for tool in &request.tools {
                if run.disabled_natives.contains(&tool.name) {
                    failures.push(format!(
                        "expect.model_api.no_disabled_native_tools: request {} declares the \
                         disabled native tool {:?}",
                        request.seq, tool.name
                    ));
                }
            }
        }
    }
    if expect.only_dsh_tools_instruction
        && !main
            .iter()
            .any(|r| user_texts(r).any(|t| t.contains(ONLY_DSH_TOOLS_WORDS)))
    {
        failures.push(format!(
            "expect.model_api.only_dsh_tools_instruction: no user content holds {ONLY_DSH_TOOLS_WORDS:?}"
        ));
    }
    failures
}

/// The agent's main requests (not its side requests, which the journal marks `utility`).
fn main_requests(journal: &[JournalEntry]) -> Vec<&RequestEntry> {
    let utility: Vec<u64> = journal
        .iter()
        .filter_map(|e| match e {
            JournalEntry::Utility { seq, .. } => Some(*seq),
            _ => None,
        })
        .collect();
    journal
        .iter()
        .filter_map(|e| match e {
            JournalEntry::Request(r)
                if r.method != ApiMethod::CountTokens && !utility.contains(&r.seq) =>
            {
                Some(r)
            }
            _ => None,
        })
        .collect()
}

fn user_texts(request: &RequestEntry) -> impl Iterator<Item = &str> {
    request
        .contents
        .iter()
        .filter(|c| c.role == "user")
        .flat_map(|c| &c.parts)
        .filter(|p| p.kind == PartKind::Text)
        .filter_map(|p| p.text.as_deref())
}

/// Whether `declared` is DSH's tool `tool` under the bridge's hashed name:
/// `<tool>_<12 hex>`, alone (1.3.0's naming is still to be recorded) or as Gemini CLI
/// names an MCP tool, after `mcp_<server>_` for the bridge's server `dsh`.
pub fn is_bridge_name_of(declared: &str, tool: &str) -> bool {
    let Some(rest) = declared.strip_suffix(hash_suffix(declared).unwrap_or("\0")) else {
        return false;
    };
    rest == tool || rest.strip_prefix("mcp_dsh_") == Some(tool)
}

/// Whether `name` is a bridge tool's MCP name, however an agent prefixes it: something,
/// then `_` and 12 lowercase hex digits (the turn's hash).
pub fn is_bridge_name(name: &str) -> bool {
    hash_suffix(name).is_some()
}

/// The `_<12 lowercase hex>` a bridge name ends with, after at least one character.
fn hash_suffix(name: &str) -> Option<&str> {
    let at = name.len().checked_sub(13).filter(|at| *at > 0)?;
    let suffix = name.get(at..)?;
    let hex = suffix.strip_prefix('_')?;
    hex.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        .then_some(suffix)
}

fn judge_declared(main: &[&RequestEntry], tools: &[String]) -> Vec<String> {
    let mut failures = Vec::new();
    let Some(request) = main
        .iter()
        .find(|r| !r.tools.is_empty() || tools.is_empty())
    else {
        return vec![format!(
            "expect.model_api.declared_tools: no model request declared any tool (expected {tools:?})"
        )];
    };
    let bridge: Vec<&str> = request
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .filter(|n| is_bridge_name(n))
        .collect();
    for tool in tools {
        if !bridge.iter().any(|n| is_bridge_name_of(n, tool)) {
            failures.push(format!(
                "expect.model_api.declared_tools: DSH's {tool:?} is not declared under a bridge \
                 name (declared: {bridge:?})"
            ));
        }
    }
    if bridge.len() != tools.len() {
        failures.push(format!(
            "expect.model_api.declared_tools: {} bridge tools declared, expected {} ({bridge:?})",
            bridge.len(),
            tools.len()
        ));
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bridge_name_is_the_tool_and_its_hash_never_a_partial_match() {
        assert!(is_bridge_name_of("read_file_c9f8123bd272", "read_file"));
        assert!(is_bridge_name_of(
            "mcp_dsh_read_file_c9f8123bd272",
            "read_file"
        ));
        assert!(!is_bridge_name_of("mcp_dsh_read_file_c9f8123bd272", "file"));
        assert!(!is_bridge_name_of("read_file_c9f8123bd27", "read_file"));
        assert!(!is_bridge_name_of("read_file_C9F8123BD272", "read_file"));
        assert!(!is_bridge_name_of("read_file", "read_file"));
    }
}
