//! Loading a [`Script`] from a file (YAML or JSON; serde-saphyr reads both) and checking
//! what the type system cannot: the default model is in the catalogue, model ids are
//! unique, call arguments are objects, matchers are not empty, a `parallel` group and a
//! question's answers are not empty.

use std::path::{Path, PathBuf};

use crate::acp::catalogue::FREE_TIER_MODELS;
use crate::script::{CallStep, Script, Step};

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
            check_step(step).map_err(|message| format!("turns[{t}].steps[{s}]: {message}"))?;
        }
    }
    Ok(())
}

fn check_step(step: &Step) -> Result<(), String> {
    match step {
        Step::Call(call) => check_call("call", call),
        Step::Parallel(calls) => {
            if calls.is_empty() {
                return Err("`parallel` names no call".into());
            }
            calls
                .iter()
                .enumerate()
                .try_for_each(|(i, call)| check_call(&format!("parallel[{i}]"), call))
        }
        Step::Native(native) if native.tool.is_empty() => Err("`native.tool` is empty".into()),
        Step::Question(question) => {
            if question.title.is_empty() {
                return Err("`question.title` is empty".into());
            }
            if question.options.is_empty() {
                return Err("`question.options` offers no answer".into());
            }
            if question.options.iter().any(String::is_empty) {
                return Err("`question.options` has an empty answer".into());
            }
            Ok(())
        }
        Step::ClientRequest(request) => {
            if request.method.is_empty() {
                return Err("`client_request.method` is empty".into());
            }
            if !request.params.is_object() {
                return Err("`client_request.params` must be a map".into());
            }
            Ok(())
        }
        Step::ForeignCall(foreign) => {
            if foreign.server.is_empty() || foreign.tool.is_empty() {
                return Err("`foreign_call` needs a `server` and a `tool`".into());
            }
            if !foreign.args.is_object() {
                return Err("`foreign_call.args` must be a map".into());
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_call(what: &str, call: &CallStep) -> Result<(), String> {
    if !call.args.is_object() {
        return Err(format!("`{what}.args` must be a map"));
    }
    if call.tool.is_empty() {
        return Err(format!("`{what}.tool` is empty"));
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
    fn the_new_steps_parse_with_their_defaults_and_are_checked() {
        let text = "turns:\n  - steps:\n      - parallel: [{tool: Echo, args: {text: a}}, {tool: Echo}]\n      - native: {tool: run_command}\n      - native: {tool: view_file, kind: read, ask: false}\n      - question: {title: Which?, options: [Verified, Needs review]}\n      - foreign_call: {server: other, tool: wipe}\n";
        let script = parse_script(text).unwrap_or_default();
        let steps = &script.turns[0].steps;
        assert_eq!(steps.len(), 5, "{script:?}");
        let Step::Native(native) = &steps[1] else {
            panic!("{steps:?}")
        };
        assert_eq!((native.kind.as_str(), native.ask), ("execute", true));
        assert_eq!(check_script(&script), Ok(()));

        let bad = [
            "turns:\n  - steps:\n      - parallel: []\n",
            "turns:\n  - steps:\n      - parallel: [{tool: Echo, args: [1]}]\n",
            "turns:\n  - steps:\n      - question: {title: Which?, options: []}\n",
            "turns:\n  - steps:\n      - foreign_call: {server: \"\", tool: wipe}\n",
            "turns:\n  - steps:\n      - native: {tool: \"\"}\n",
        ];
        for text in bad {
            let script = parse_script(text).unwrap_or_default();
            assert!(check_script(&script).is_err(), "{text}");
        }
        let unknown = "turns:\n  - steps:\n      - native: {tool: x, asks: false}\n";
        assert!(parse_script(unknown).is_err());
        let bad_kind = "turns:\n  - steps:\n      - native: {tool: x, kind: shell}\n";
        assert!(parse_script(bad_kind).is_err());
    }

    #[test]
    fn conversation_files_default_on_and_slash_commands_default_ignored() {
        use crate::script::prompt::SlashCommands;
        let script = parse_script("").unwrap_or_default();
        assert!(script.session_new.conversation_files);
        assert_eq!(script.prompt.slash_commands, SlashCommands::Ignore);
        let text = "session_new: { conversation_files: false, late_permission: Echo }\nprompt: { slash_commands: paranoid }\n";
        let script = parse_script(text).unwrap_or_default();
        assert!(!script.session_new.conversation_files);
        assert_eq!(script.session_new.late_permission.as_deref(), Some("Echo"));
        assert_eq!(script.prompt.slash_commands, SlashCommands::Paranoid);
        for bad in [
            "session_new: { conversation_files: 1 }\n",
            "prompt: { slash_commands: all }\n",
            "prompt: { slash_command: paranoid }\n",
        ] {
            assert!(parse_script(bad).is_err(), "{bad}");
        }
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
