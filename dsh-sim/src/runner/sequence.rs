//! Draws a run as a Mermaid sequence diagram from the fake's journal: the adapter's
//! ACP frames to each server process and back, and the server's MCP calls to the bridge.

use fake_antigravity::journal::JournalEntry;
use serde_json::Value;

/// A Mermaid `sequenceDiagram` of every process in the journal.
pub fn mermaid(journal: &[Vec<JournalEntry>]) -> String {
    let mut out = String::from("sequenceDiagram\n    participant A as Adapter\n");
    for (n, _) in journal.iter().enumerate() {
        out.push_str(&format!("    participant S{n} as Server {}\n", n + 1));
    }
    out.push_str("    participant B as Bridge\n");
    for (n, entries) in journal.iter().enumerate() {
        for entry in entries {
            if let Some(line) = arrow(n, entry) {
                out.push_str("    ");
                out.push_str(&line);
                out.push('\n');
            }
        }
    }
    out
}

fn arrow(n: usize, entry: &JournalEntry) -> Option<String> {
    let server = format!("S{n}");
    Some(match entry {
        JournalEntry::Started { pid, .. } => format!("Note over {server}: started (pid {pid})"),
        JournalEntry::AcpIn { frame } => match frame.get("method").and_then(Value::as_str) {
            Some(method) => format!("A->>{server}: {method}{}", id_suffix(frame)),
            None => format!("A-->>{server}: {}", answer(frame)),
        },
        JournalEntry::AcpOut { frame } => match frame.get("method").and_then(Value::as_str) {
            Some("session/update") => {
                let kind = frame
                    .pointer("/params/update/sessionUpdate")
                    .and_then(Value::as_str)
                    .unwrap_or("?");
                format!("{server}-)A: update {kind}")
            }
            Some(method) => format!("{server}->>A: {method}{}", id_suffix(frame)),
            None => format!("{server}-->>A: {}", answer(frame)),
        },
        JournalEntry::McpRequest { method, .. } => format!("{server}->>B: {method}"),
        JournalEntry::McpResponse { method, result, .. } => {
            let how = match result {
                Some(r) if r.get("isError") == Some(&Value::Bool(true)) => "isError",
                Some(_) => "ok",
                None => "failed",
            };
            format!("B-->>{server}: {method} {how}")
        }
        JournalEntry::ExpectationFailed { turn, step, .. } => {
            format!("Note over {server}: EXPECTATION FAILED (turn {turn}, step {step})")
        }
        JournalEntry::UnmatchedPrompt { .. } => format!("Note over {server}: UNMATCHED PROMPT"),
        JournalEntry::ChildSpawned { pid } => format!("Note over {server}: child pid {pid}"),
        JournalEntry::NativeStepWithheld { tool, .. } => {
            format!(
                "Note over {server}: native {} withheld (disabled)",
                sanitize(tool)
            )
        }
        JournalEntry::NativeAction {
            action, outcome, ..
        } => format!("Note over {server}: native {action} {outcome}"),
        JournalEntry::SlashCommand { command, .. } => {
            format!(
                "Note over {server}: SLASH COMMAND /{} ran",
                sanitize(command)
            )
        }
        JournalEntry::SettingsWritten { by, .. } => {
            format!(
                "Note over {server}: settings.json written by {}",
                sanitize(by)
            )
        }
        JournalEntry::ConversationFileVanished { file, .. } => {
            format!("Note over {server}: B08 FILE VANISHED {}", sanitize(file))
        }
        JournalEntry::ServerFaultApplied { fault, frame, .. } => {
            format!(
                "Note over {server}: FAULT {} at frame {frame}",
                sanitize(fault)
            )
        }
        JournalEntry::McpFaultApplied { fault, call, .. } => {
            format!(
                "Note over {server}: MCP FAULT {} at call {call}",
                sanitize(fault)
            )
        }
        JournalEntry::Exited { reason } => {
            format!("Note over {server}: exited ({})", sanitize(reason))
        }
    })
}

/// ` (id 1a2b3c4d)`: the request id, shortened and made safe for Mermaid.
fn id_suffix(frame: &Value) -> String {
    frame
        .get("id")
        .map(|id| format!(" (id {})", short_id(id)))
        .unwrap_or_default()
}

fn short_id(id: &Value) -> String {
    let text = id.as_str().map_or_else(|| id.to_string(), str::to_owned);
    sanitize(&text.chars().take(8).collect::<String>())
}

fn answer(frame: &Value) -> String {
    let id = frame.get("id").map(short_id).unwrap_or_default();
    match frame.get("error") {
        Some(error) => format!(
            "error (id {id}) code {}",
            sanitize(&error.get("code").map(Value::to_string).unwrap_or_default())
        ),
        None => format!("result (id {id})"),
    }
}

/// Mermaid message text may not hold `;` or `#` freely; keep it plain.
fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_alphanumeric() || c == ' ' || c == '-' {
                c
            } else {
                ' '
            }
        })
        .collect()
}
