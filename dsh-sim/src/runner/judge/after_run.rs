//! The leak check after every run (not only at disposal), judged from outside on the
//! fake's journal and the system: a process that is still alive must be idle and healthy
//! (no prompt left unanswered, its last prompt not cancelled or failed, which would have
//! disposed it), a process the adapter disposed (it closed the connection) left no scratch
//! cwd, and no session `cwd` of a prompted (finished) session may remain. A
//! turn that ended uncleanly is torn down after DSH holds its terminal part (the server's
//! shutdown grace, then its group killed), so the check waits for that, bounded by
//! [`crate::runner::judge::leak::exit_bound`], counts a zombie as gone, and says how long it
//! waited. Also: waiting, with a bound, for processes to exit.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use fake_antigravity::journal::JournalEntry;
use serde_json::Value;

use crate::runner::judge::leak::{process_is_running, seconds};

/// How long a turn that ended uncleanly may take to close its bridge after DSH holds its
/// terminal part (its process gets [`crate::runner::judge::leak::exit_bound`]).
pub const SETTLE_BOUND: Duration = Duration::from_secs(3);

/// How often a bounded wait looks at the journal again.
const POLL: Duration = Duration::from_millis(20);

/// What one process's journal says about its sessions.
#[derive(Debug, Default)]
struct SessionFacts {
    pid: Option<u32>,
    /// The process's own (scratch) working directory.
    cwd: Option<String>,
    exited: bool,
    /// It exited because its stdin closed: the client closed the connection (disposed it).
    closed_by_client: bool,
    /// The `cwd` of every session that received a prompt.
    prompted_cwds: Vec<String>,
    /// Prompts not answered yet.
    open_prompts: usize,
    /// How the last answered prompt ended: `ok`, `cancelled` or `error`.
    last_prompt: Option<&'static str>,
}

fn session_facts(entries: &[JournalEntry]) -> SessionFacts {
    let mut facts = SessionFacts::default();
    let mut new_requests: HashMap<String, String> = HashMap::new();
    let mut cwds: HashMap<String, String> = HashMap::new();
    let mut prompts: HashMap<String, String> = HashMap::new();
    for entry in entries {
        match entry {
            JournalEntry::Started { pid, cwd, .. } => {
                facts.pid = Some(*pid);
                facts.cwd = Some(cwd.clone());
            }
            JournalEntry::Exited { reason } => {
                facts.exited = true;
                facts.closed_by_client = reason == "stdin closed";
            }
            JournalEntry::AcpIn { frame } => {
                let id = frame.get("id").map(Value::to_string).unwrap_or_default();
                let params = frame.get("params").unwrap_or(&Value::Null);
                match frame.get("method").and_then(Value::as_str) {
                    Some("session/new") => {
                        let cwd = params
                            .get("cwd")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        new_requests.insert(id, cwd.to_owned());
                    }
                    Some("session/prompt") => {
                        let session = params.get("sessionId").and_then(Value::as_str);
                        prompts.insert(id, session.unwrap_or_default().to_owned());
                    }
                    _ => {}
                }
            }
            JournalEntry::AcpOut { frame } if frame.get("method").is_none() => {
                let id = frame.get("id").map(Value::to_string).unwrap_or_default();
                if let Some(cwd) = new_requests.remove(&id)
                    && let Some(session) =
                        frame.pointer("/result/sessionId").and_then(Value::as_str)
                {
                    cwds.insert(session.to_owned(), cwd);
                }
                if let Some(session) = prompts.remove(&id) {
                    if let Some(cwd) = cwds.get(&session) {
                        facts.prompted_cwds.push(cwd.clone());
                    }
                    let stop = frame.pointer("/result/stopReason").and_then(Value::as_str);
                    facts.last_prompt = Some(match stop {
                        Some("cancelled") => "cancelled",
                        Some(_) => "ok",
                        None => "error",
                    });
                }
            }
            _ => {}
        }
    }
    facts.open_prompts = prompts.len();
    facts
}

/// Every per-run leak found now.
fn leaks_now(journal_dir: &Path) -> Vec<String> {
    let journal = match fake_antigravity::journal::read_dir(journal_dir) {
        Ok(journal) => journal,
        Err(error) => return vec![format!("cannot read the fake's journal: {error}")],
    };
    let mut leaks = Vec::new();
    for (index, entries) in journal.iter().enumerate() {
        let facts = session_facts(entries);
        let live = !facts.exited && facts.pid.is_some_and(process_is_running);
        if live && facts.open_prompts > 0 {
            leaks.push(format!(
                "server process {} is alive with {} prompt(s) unanswered",
                index + 1,
                facts.open_prompts
            ));
        }
        if live && matches!(facts.last_prompt, Some("cancelled" | "error")) {
            leaks.push(format!(
                "server process {} (pid {}) is alive although its last turn did not end \
                 cleanly",
                index + 1,
                facts.pid.unwrap_or_default()
            ));
        }
        // A process the adapter disposed (it closed the connection, and the process exited)
        // takes its scratch directory with it at once, not only at disposal (C14).
        if let (false, true, Some(cwd)) = (live, facts.closed_by_client, &facts.cwd)
            && Path::new(cwd).exists()
        {
            leaks.push(format!(
                "server process {} is gone but its scratch cwd {cwd} still exists",
                index + 1
            ));
        }
        for cwd in facts.prompted_cwds.iter().filter(|c| Path::new(c).exists()) {
            leaks.push(format!(
                "the session cwd {cwd} of a finished turn still exists"
            ));
        }
    }
    leaks
}

/// The per-run leaks left once `bound` passed (none as soon as there are none), each
/// saying how long it was waited on.
pub async fn leaks_after_run(journal_dir: &Path, bound: Duration) -> Vec<String> {
    let started = Instant::now();
    loop {
        let leaks = leaks_now(journal_dir);
        let waited = started.elapsed();
        if leaks.is_empty() {
            return leaks;
        }
        if waited >= bound {
            return leaks
                .into_iter()
                .map(|leak| format!("{leak} (still so after {} of waiting)", seconds(waited)))
                .collect();
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Waits until `count` server processes journaled their exit and are really gone (a
/// zombie counts: the adapter's next look at it sees it exited; the journal's record is
/// written just before the process ends, so it alone would race the adapter's checkout);
/// `Err` after `bound`.
pub async fn await_exits(journal_dir: &Path, count: usize, bound: Duration) -> Result<(), String> {
    let started = Instant::now();
    loop {
        let exited = fake_antigravity::journal::read_dir(journal_dir)
            .map(|journal| {
                journal
                    .iter()
                    .filter(|entries| {
                        let journaled = entries
                            .iter()
                            .any(|e| matches!(e, JournalEntry::Exited { .. }));
                        let gone = entries.iter().all(|e| match e {
                            JournalEntry::Started { pid, .. } => !process_is_running(*pid),
                            _ => true,
                        });
                        journaled && gone
                    })
                    .count()
            })
            .unwrap_or(0);
        if exited >= count {
            return Ok(());
        }
        if started.elapsed() >= bound {
            return Err(format!(
                "{exited} server process(es) exited within {bound:?}, expected {count}"
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}
