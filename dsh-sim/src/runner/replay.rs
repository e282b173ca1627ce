//! Replay scenarios: when a scenario fails against a real server, the runner writes
//! `replay.yaml` beside its artefacts, the same scenario (its `dsh:` and `expect:`
//! sections verbatim) with a `fake:` script that replays what the server sent, rebuilt
//! from the client-side journal: per `session/prompt`, a turn matching the end of that
//! prompt, whose steps are the server's text, thought and usage updates, its MCP and
//! native tool calls and questions, and whose stop is the server's stop reason (a
//! cancelled prompt waits for the cancel). Run against the fake it fails the same way,
//! ready to commit as a bug reproduction.

use fake_antigravity::journal::JournalEntry;
use fake_antigravity::script::refused_native::RefusedNative;
use fake_antigravity::script::{
    CallStep, NativeIdFormat, NativeKind, NativeStep, PermissionMeta, PromptMatch, QuestionStep,
    Script, Step, StopScript, TurnScript, UsageStep, WaitForCancelStep,
};
use serde_json::Value;

/// How much of a prompt's end a replayed turn matches on.
const MATCH_CHARS: usize = 60;
/// The adapter's prompt ends with this marker; the text before it is the newest message.
const END_MARKER: &str = "[End of conversation]";

/// The replay scenario for `original` (the failed scenario's YAML text).
pub fn replay_yaml(original: &str, name: &str, journal: &[Vec<JournalEntry>]) -> String {
    let script = replay_script(journal);
    let fake = serde_json::to_string(&script).unwrap_or_else(|_| "{}".to_owned());
    let mut out = String::from("# yaml-language-server: $schema=../scenario.schema.json\n");
    out.push_str(&format!(
        "name: {}\ncovers: []\nfake_only: replays what a real server sent, as the fake's script\n",
        serde_json::Value::String(format!("replay: {name}"))
    ));
    out.push_str(&format!("fake: {fake}\n"));
    for key in ["dsh", "expect"] {
        out.push_str(&top_level_section(original, key));
    }
    out
}

/// The lines of a top-level `key:` section of a YAML document, verbatim.
fn top_level_section(text: &str, key: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        let top = line
            .chars()
            .next()
            .is_some_and(|c| !c.is_whitespace() && c != '#');
        if top {
            inside = line.starts_with(&format!("{key}:"));
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn prompt_text(frame: &Value) -> String {
    frame
        .pointer("/params/prompt")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect()
}

/// The end of the newest message of a prompt.
fn matcher(prompt: &str) -> PromptMatch {
    let body = prompt
        .rsplit_once(END_MARKER)
        .map_or(prompt, |(before, _)| before);
    let body = body.trim_end();
    let count = body.chars().count();
    let tail: String = body
        .chars()
        .skip(count.saturating_sub(MATCH_CHARS))
        .collect();
    let tail = tail.trim_start().to_owned();
    PromptMatch {
        prompt_contains: (!tail.is_empty()).then_some(tail),
    }
}

fn kind_of(name: Option<&str>) -> NativeKind {
    match name {
        Some("read") => NativeKind::Read,
        Some("edit") => NativeKind::Edit,
        Some("delete") => NativeKind::Delete,
        Some("move") => NativeKind::Move,
        Some("search") => NativeKind::Search,
        Some("think") => NativeKind::Think,
        Some("fetch") => NativeKind::Fetch,
        Some("switch_mode") => NativeKind::SwitchMode,
        Some("other") => NativeKind::Other,
        _ => NativeKind::Execute,
    }
}

/// The step a `session/update` replays as, if any.
fn step_of(update: &Value) -> Option<Step> {
    let text = || {
        update
            .pointer("/content/text")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    match update.get("sessionUpdate").and_then(Value::as_str)? {
        "agent_message_chunk" => text().map(Step::Text),
        "agent_thought_chunk" => text().map(Step::Thought),
        "usage_update" => Some(Step::Usage(UsageStep {
            used: update.get("used")?.as_u64()?,
            size: update.get("size")?.as_u64()?,
        })),
        "tool_call" => {
            if let Some(tool) = update.pointer("/_meta/mcp/tool").and_then(Value::as_str) {
                let args = update
                    .pointer("/rawInput/arguments")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
                return Some(Step::Call(CallStep {
                    tool: tool.to_owned(),
                    args,
                    permission_meta: PermissionMeta::Mcp,
                }));
            }
            let title = update
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or("tool");
            let tool = title
                .trim_start_matches("Running ")
                .trim_start_matches("Run ")
                .trim_end_matches('?')
                .to_owned();
            Some(Step::Native(NativeStep {
                tool,
                kind: kind_of(update.get("kind").and_then(Value::as_str)),
                ask: update.get("status").and_then(Value::as_str) == Some("pending"),
                id_format: NativeIdFormat::Hex,
                path: None,
                content: String::new(),
                signal: None,
                after_refusal: RefusedNative::Failed,
            }))
        }
        _ => None,
    }
}

/// A question the server asked (`session/request_permission` for `interaction_…`).
fn question_of(params: &Value) -> Option<Step> {
    let call = params.get("toolCall")?;
    let id = call.get("toolCallId")?.as_str()?;
    if !id.starts_with("interaction_") {
        return None;
    }
    let options = params
        .get("options")?
        .as_array()?
        .iter()
        .filter_map(|o| o.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    Some(Step::Question(QuestionStep {
        title: call.get("title")?.as_str()?.to_owned(),
        options,
    }))
}

/// The fake script that replays the journal.
pub fn replay_script(journal: &[Vec<JournalEntry>]) -> Script {
    let mut turns = Vec::new();
    for entries in journal {
        let mut open: Option<(Value, TurnScript)> = None;
        for entry in entries {
            match entry {
                JournalEntry::AcpIn { frame }
                    if frame.get("method").and_then(Value::as_str) == Some("session/prompt") =>
                {
                    let turn = TurnScript {
                        matcher: matcher(&prompt_text(frame)),
                        steps: Vec::new(),
                        stop: StopScript::EndTurn,
                    };
                    if let Some((_, done)) = open.replace((frame["id"].clone(), turn)) {
                        turns.push(done);
                    }
                }
                JournalEntry::AcpOut { frame } => {
                    let Some((id, turn)) = open.as_mut() else {
                        continue;
                    };
                    match frame.get("method").and_then(Value::as_str) {
                        Some("session/update") => {
                            if let Some(step) = frame.pointer("/params/update").and_then(step_of) {
                                turn.steps.push(step);
                            }
                        }
                        Some("session/request_permission") => {
                            if let Some(step) = frame.get("params").and_then(question_of) {
                                turn.steps.push(step);
                            }
                        }
                        Some(_) => {}
                        None if frame.get("id") == Some(id) => {
                            match frame.pointer("/result/stopReason").and_then(Value::as_str) {
                                Some("max_tokens") => turn.stop = StopScript::MaxTokens,
                                Some("refusal") => turn.stop = StopScript::Refusal,
                                Some("cancelled") => {
                                    turn.steps.push(Step::WaitForCancel(WaitForCancelStep {
                                        timeout_ms: 10_000,
                                    }))
                                }
                                _ => {}
                            }
                            if let Some((_, done)) = open.take() {
                                turns.push(done);
                            }
                        }
                        None => {}
                    }
                }
                _ => {}
            }
        }
        if let Some((_, done)) = open {
            turns.push(done);
        }
    }
    Script {
        turns,
        ..Script::default()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_prompt_becomes_a_turn_with_the_servers_updates() {
        let journal = vec![vec![
            JournalEntry::AcpIn {
                frame: json!({"id": 3, "method": "session/prompt", "params": {"prompt": [
                    {"type": "text", "text": "### user\nhello there\n\n[End of conversation]\nContinue."}]}}),
            },
            JournalEntry::AcpOut {
                frame: json!({"method": "session/update", "params": {"update": {
                    "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}}}}),
            },
            JournalEntry::AcpOut {
                frame: json!({"method": "session/update", "params": {"update": {
                    "sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "Running view_file",
                    "kind": "read", "status": "in_progress"}}}),
            },
            JournalEntry::AcpOut {
                frame: json!({"id": 3, "result": {"stopReason": "max_tokens"}}),
            },
        ]];
        let script = replay_script(&journal);
        assert_eq!(script.turns.len(), 1);
        let turn = &script.turns[0];
        assert_eq!(
            turn.matcher.prompt_contains.as_deref(),
            Some("### user\nhello there")
        );
        assert_eq!(turn.stop, StopScript::MaxTokens);
        assert_eq!(turn.steps[0], Step::Text("Hi".into()));
        assert!(matches!(&turn.steps[1], Step::Native(n) if n.tool == "view_file" && !n.ask));
    }

    #[test]
    fn the_dsh_and_expect_sections_are_copied_verbatim() {
        let original = "name: x\ncovers: []\nfake: {}\ndsh:\n  chat:\n    - user: hi\n# note\nexpect:\n  finish: stop\n";
        let replay = replay_yaml(original, "x", &[]);
        assert!(
            replay.contains("dsh:\n  chat:\n    - user: hi\n"),
            "{replay}"
        );
        assert!(replay.contains("expect:\n  finish: stop\n"), "{replay}");
        assert!(replay.contains("fake_only: replays"), "{replay}");
    }
}
