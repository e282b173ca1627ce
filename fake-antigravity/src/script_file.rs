//! Loading a [`Script`] from a file (YAML or JSON; serde-saphyr reads both) and checking
//! what the type system cannot: the default model is in the catalogue, model ids are
//! unique, call arguments are objects, matchers are not empty.

use std::path::{Path, PathBuf};

use crate::catalogue::FREE_TIER_MODELS;
use crate::script::{Script, Step};

/// Why a script could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("{path}: cannot read script: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The text is not a valid script; `line`/`column` are 1-based when known.
    #[error("{path}:{line}:{column}: invalid script: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line (0 when unknown).
        line: u64,
        /// The column (0 when unknown).
        column: u64,
        /// The parser's full message (with a source excerpt).
        message: String,
    },
    /// The script parsed but does not make sense.
    #[error("{path}: invalid script: {message}")]
    Invalid {
        /// The file (empty for an in-memory script).
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// Reads, parses and checks a script file.
pub fn load_script(path: &Path) -> Result<Script, ScriptError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let script = parse_script(&text).map_err(|e| match e {
        ScriptError::Parse {
            line,
            column,
            message,
            ..
        } => ScriptError::Parse {
            path: path.to_path_buf(),
            line,
            column,
            message,
        },
        other => other,
    })?;
    check_script(&script).map_err(|message| ScriptError::Invalid {
        path: path.to_path_buf(),
        message,
    })?;
    Ok(script)
}

/// Parses script text (an empty text is the default profile `{}`).
pub fn parse_script(text: &str) -> Result<Script, ScriptError> {
    if text.trim().is_empty() {
        return Ok(Script::default());
    }
    serde_saphyr::from_str::<Script>(text).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        ScriptError::Parse {
            path: PathBuf::new(),
            line,
            column,
            message: e.to_string(),
        }
    })
}

/// Checks a parsed script; the error says what is wrong.
pub fn check_script(script: &Script) -> Result<(), String> {
    let catalogue: Vec<&str> = match &script.models {
        Some(models) => models.iter().map(String::as_str).collect(),
        None => FREE_TIER_MODELS.iter().map(|(id, _)| *id).collect(),
    };
    if catalogue.is_empty() {
        return Err("`models` must name at least one model".into());
    }
    for (i, id) in catalogue.iter().enumerate() {
        if id.is_empty() {
            return Err("`models` has an empty model id".into());
        }
        if catalogue[..i].contains(id) {
            return Err(format!("`models` names `{id}` twice"));
        }
    }
    if let Some(current) = script.default_model.as_deref()
        && !catalogue.contains(&current)
    {
        return Err(format!(
            "`default_model` `{current}` is not in the catalogue ({})",
            catalogue.join(", ")
        ));
    }
    for (t, turn) in script.turns.iter().enumerate() {
        if turn
            .matcher
            .prompt_contains
            .as_deref()
            .is_some_and(str::is_empty)
        {
            return Err(format!("turns[{t}]: `prompt_contains` is empty"));
        }
        for (s, step) in turn.steps.iter().enumerate() {
            if let Step::Call(call) = step {
                if !call.args.is_object() {
                    return Err(format!("turns[{t}].steps[{s}]: `call.args` must be a map"));
                }
                if call.tool.is_empty() {
                    return Err(format!("turns[{t}].steps[{s}]: `call.tool` is empty"));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_errors_carry_line_and_column() {
        let text = "auth: signed-in\nturns:\n  - steps:\n      - txet: hi\n";
        match parse_script(text) {
            Err(ScriptError::Parse { line, column, .. }) => {
                assert_eq!((line, column), (4, 9));
            }
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn json_scripts_parse_too() {
        let text = r#"{"auth":"required","turns":[{"steps":[{"text":"hi"}],"stop":"refusal"}]}"#;
        let script = parse_script(text);
        assert!(script.is_ok(), "{script:?}");
    }

    #[test]
    fn default_model_must_be_in_the_catalogue() {
        let script = Script {
            models: Some(vec!["m1".into()]),
            default_model: Some("m2".into()),
            ..Script::default()
        };
        assert!(check_script(&script).is_err());
        let script = Script {
            models: Some(vec!["m1".into(), "m2".into()]),
            default_model: Some("m2".into()),
            ..Script::default()
        };
        assert_eq!(check_script(&script), Ok(()));
    }
}
