//! What a `native` step's tool really does when it runs (docs/antigravity-1.3.0.md §8): its tool call id
//! in one of the 1.3.0 formats, its `rawInput` with the recorded keys, and, when the step
//! names a `path`, the real read or write, relative paths taken from the session's cwd,
//! and when it names a `signal`, the real `kill(ppid, 0)`. Each action's real outcome
//! (done, or the OS error) is kept for the journal, so a scenario can prove from outside
//! what the adapter let happen and what the kernel refused.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::journal::JournalEntry;
use crate::script::{NativeIdFormat, NativeKind, NativeStep, SignalTarget};

/// A native tool call id in the step's format.
pub fn native_id(format: NativeIdFormat, session_id: &str) -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    match format {
        NativeIdFormat::Hex => hex,
        NativeIdFormat::Call => {
            let digits: String = hex
                .bytes()
                .map(|b| char::from(b'0' + b % 10))
                .take(6)
                .collect();
            format!("call_{digits}")
        }
        NativeIdFormat::Session => format!("{session_id}:7"),
        NativeIdFormat::Trajectory => "trajectory:4".into(),
    }
}

/// The step's path, resolved against the session's cwd.
fn resolved(native: &NativeStep, cwd: &str) -> Option<PathBuf> {
    let path = Path::new(native.path.as_deref()?);
    Some(if path.is_absolute() {
        path.to_path_buf()
    } else {
        Path::new(cwd).join(path)
    })
}

/// The `rawInput` 1.3.0 shows for the tool (`AbsolutePath` for reads, `TargetFile` and
/// `CodeContent` for edits, `{}` otherwise).
pub fn raw_input(native: &NativeStep, cwd: &str) -> Value {
    let Some(path) = resolved(native, cwd) else {
        return json!({});
    };
    let path = path.to_string_lossy().into_owned();
    match native.kind {
        NativeKind::Read => json!({"AbsolutePath": path}),
        NativeKind::Edit => json!({"TargetFile": path, "CodeContent": native.content}),
        _ => json!({}),
    }
}

/// One real action of a native tool and how it ended.
#[derive(Debug)]
pub struct Action {
    /// `read`, `write` or `signal`.
    pub action: &'static str,
    /// The path, or `parent`.
    pub target: String,
    /// What it yields for the completion's content (what was read, or what was written
    /// where), or the OS error.
    pub result: io::Result<Option<String>>,
}

impl Action {
    /// Its journal entry, for the tool `tool`.
    pub fn journal_entry(&self, tool: &str) -> JournalEntry {
        let (outcome, error) = match &self.result {
            Ok(_) => ("done", None),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                ("denied", Some(e.to_string()))
            }
            Err(e) => ("failed", Some(e.to_string())),
        };
        JournalEntry::NativeAction {
            tool: tool.to_owned(),
            action: self.action.to_owned(),
            target: self.target.clone(),
            outcome: outcome.to_owned(),
            error,
        }
    }

    /// The completion's text: what it yields, or why it failed.
    pub fn text(&self) -> Option<String> {
        match &self.result {
            Ok(text) => text.clone(),
            Err(e) => Some(format!("cannot {} {}: {e}", self.action, self.target)),
        }
    }
}

/// Runs the tool for real: the `path`'s read or write, then the `signal`.
pub fn act(native: &NativeStep, cwd: &str) -> Vec<Action> {
    let mut actions = Vec::new();
    if let Some(path) = resolved(native, cwd) {
        let target = path.display().to_string();
        match native.kind {
            NativeKind::Read => actions.push(Action {
                action: "read",
                target,
                result: std::fs::read_to_string(&path).map(Some),
            }),
            NativeKind::Edit => actions.push(Action {
                action: "write",
                result: std::fs::write(&path, &native.content)
                    .map(|()| Some(format!("Created {target}"))),
                target,
            }),
            _ => {}
        }
    }
    if let Some(SignalTarget::Parent) = native.signal {
        actions.push(Action {
            action: "signal",
            target: "parent".to_owned(),
            result: signal_parent(),
        });
    }
    actions
}

/// `kill(ppid, 0)`: whether this process may signal its parent (the adapter's process).
/// Signals are a Unix notion; on other systems the action fails `Unsupported`, and the
/// scenarios that use it run on Linux only (`platforms`).
fn signal_parent() -> io::Result<Option<String>> {
    #[cfg(unix)]
    {
        let parent = nix::unistd::Pid::from_raw(
            i32::try_from(std::os::unix::process::parent_id()).unwrap_or(i32::MAX),
        );
        nix::sys::signal::kill(parent, None)
            .map(|()| Some("signalled the parent process".to_owned()))
            .map_err(|errno| io::Error::from_raw_os_error(errno as i32))
    }
    #[cfg(not(unix))]
    {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "a signal to the parent is a Unix action",
        ))
    }
}
