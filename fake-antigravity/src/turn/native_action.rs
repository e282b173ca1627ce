//! What a `native` step's tool really does when it runs (docs/antigravity-1.3.0.md §8): its tool call id
//! in one of the 1.3.0 formats, its `rawInput` with the recorded keys, and, when the step
//! names a `path`, the real read or write, relative paths taken from the session's cwd.
//! So a scenario can prove from outside what the adapter let happen.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::script::{NativeIdFormat, NativeKind, NativeStep};

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

/// Runs the tool for real; the text content of its completion (what was read, or what
/// was written where), or why it failed.
pub fn act(native: &NativeStep, cwd: &str) -> Result<Option<String>, String> {
    let Some(path) = resolved(native, cwd) else {
        return Ok(None);
    };
    match native.kind {
        NativeKind::Read => std::fs::read_to_string(&path)
            .map(Some)
            .map_err(|e| format!("cannot read {}: {e}", path.display())),
        NativeKind::Edit => std::fs::write(&path, &native.content)
            .map(|()| Some(format!("Created {}", path.display())))
            .map_err(|e| format!("cannot write {}: {e}", path.display())),
        _ => Ok(None),
    }
}
