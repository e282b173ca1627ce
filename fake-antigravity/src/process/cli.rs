//! The command line, absl style like the real `agy_acp_server.par`:
//! `[--script FILE] [--journal DIR] [--uid=VALUE] [--[no]debug] [--[no]notices]
//! [--[no]alsologtostderr] [--version] [--help]`. Flag values may follow `=` or come as
//! the next argument; booleans also take `=true|false|1|0`. Anything else is an error.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::acp::catalogue::{AGENT_VERSION, BUILD_LABEL};
use crate::process::helper;

/// What the process was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CliAction {
    /// Serve ACP on stdio.
    #[default]
    Serve,
    /// Print the build banner on stderr and exit 0.
    Version,
    /// Print the flags on stderr and exit 0.
    Help,
    /// Run as one of the fake's own helper processes (`helper`): sleep, after stdin
    /// ends when asked. Not a flag of the real server.
    Helper {
        /// How long to sleep.
        sleep_ms: u64,
        /// Whether to wait for stdin's end first.
        after_stdin: bool,
    },
}

/// The parsed command line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CliOptions {
    /// What to do.
    pub action: CliAction,
    /// `--script FILE`: the script (YAML or JSON); none means the default profile.
    pub script: Option<PathBuf>,
    /// `--journal DIR`: where to write this process's journal file.
    pub journal: Option<PathBuf>,
    /// `--uid=VALUE`: accepted and ignored (the registry passes `--uid=` on Linux).
    pub uid: Option<String>,
    /// `--debug`: more diagnostics on stderr.
    pub debug: bool,
    /// `--notices`: accepted and ignored.
    pub notices: bool,
    /// `--alsologtostderr`: accepted; diagnostics always go to stderr.
    pub also_log_to_stderr: bool,
}

/// A command line the fake refuses (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CliError {
    /// A flag the real server does not know either.
    #[error("Unknown command line flag '{0}'")]
    UnknownFlag(String),
    /// A value flag at the end of the line.
    #[error("Missing value for flag '--{0}'")]
    MissingValue(String),
    /// A boolean flag with a value that is not a boolean.
    #[error("Illegal value '{value}' specified for bool flag '{flag}'")]
    BadBool {
        /// The flag.
        flag: String,
        /// Its value.
        value: String,
    },
    /// A number flag with a value that is not a number.
    #[error("Illegal value '{value}' specified for int flag '{flag}'")]
    BadNumber {
        /// The flag.
        flag: String,
        /// Its value.
        value: String,
    },
    /// A positional argument (the server takes none).
    #[error("Unexpected positional argument '{0}'")]
    Positional(String),
}

/// Parses the arguments after the program name.
pub fn parse_args(args: &[OsString]) -> Result<CliOptions, CliError> {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut options = CliOptions::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let Some(flag) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
            return Err(CliError::Positional(arg.clone()));
        };
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (flag, None),
        };
        let mut value_of = |name: &str| -> Result<String, CliError> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => rest
                    .next()
                    .cloned()
                    .ok_or_else(|| CliError::MissingValue(name.to_string())),
            }
        };
        match name {
            "script" => options.script = Some(PathBuf::from(value_of(name)?)),
            "journal" => options.journal = Some(PathBuf::from(value_of(name)?)),
            "uid" => options.uid = Some(value_of(name)?),
            "version" => options.action = CliAction::Version,
            helper::SLEEP_FLAG => {
                let value = value_of(name)?;
                let sleep_ms = value.parse().map_err(|_| CliError::BadNumber {
                    flag: name.to_string(),
                    value,
                })?;
                let after_stdin = matches!(
                    options.action,
                    CliAction::Helper {
                        after_stdin: true,
                        ..
                    }
                );
                options.action = CliAction::Helper {
                    sleep_ms,
                    after_stdin,
                };
            }
            helper::AFTER_STDIN_FLAG => {
                let sleep_ms = match options.action {
                    CliAction::Helper { sleep_ms, .. } => sleep_ms,
                    _ => 0,
                };
                options.action = CliAction::Helper {
                    sleep_ms,
                    after_stdin: true,
                };
            }
            "help" | "helpshort" | "helpfull" | "h" => options.action = CliAction::Help,
            _ => {
                let (target, value) = boolean_flag(name, inline.as_deref())?;
                match target {
                    "debug" => options.debug = value,
                    "notices" => options.notices = value,
                    "alsologtostderr" => options.also_log_to_stderr = value,
                    _ => return Err(CliError::UnknownFlag(name.to_string())),
                }
            }
        }
    }
    Ok(options)
}

const BOOLEAN_FLAGS: &[&str] = &["debug", "notices", "alsologtostderr"];

fn boolean_flag<'n>(name: &'n str, inline: Option<&str>) -> Result<(&'n str, bool), CliError> {
    let (target, negated) = match name.strip_prefix("no") {
        Some(base) if BOOLEAN_FLAGS.contains(&base) => (base, true),
        _ => (name, false),
    };
    if !BOOLEAN_FLAGS.contains(&target) {
        return Err(CliError::UnknownFlag(name.to_string()));
    }
    let value = match (inline, negated) {
        (None, negated) => !negated,
        (Some(v), false) => match v.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => true,
            "false" | "0" | "no" => false,
            _ => {
                return Err(CliError::BadBool {
                    flag: name.to_string(),
                    value: v.to_string(),
                });
            }
        },
        (Some(v), true) => {
            return Err(CliError::BadBool {
                flag: name.to_string(),
                value: v.to_string(),
            });
        }
    };
    Ok((target, value))
}

/// The `--version` banner (stderr), shaped like the real one.
pub fn version_banner() -> String {
    format!(
        "Built from fake-antigravity {} (a scriptable fake of agy_acp_server {AGENT_VERSION}; not a Google build)\n\
         Build label: {BUILD_LABEL}\n\
         Currently running under Python 3.14.5\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The `--help` text (stderr).
pub fn usage() -> String {
    "fake-antigravity: a scriptable fake of Google's Antigravity ACP server 1.3.0\n\
     \n\
     Speaks ACP (NDJSON JSON-RPC) on stdin/stdout; diagnostics go to stderr.\n\
     \n\
     Flags:\n\
     \x20 --script FILE        the script (YAML or JSON); default: signed in, echo every prompt\n\
     \x20 --journal DIR        write DIR/<start-nanos>-<pid>.jsonl, one event per line\n\
     \x20 --uid=VALUE          accepted and ignored, as the registry passes it on Linux\n\
     \x20 --[no]debug          more diagnostics on stderr\n\
     \x20 --[no]notices        accepted and ignored\n\
     \x20 --[no]alsologtostderr accepted; diagnostics always go to stderr\n\
     \x20 --version            print the build banner on stderr and exit\n"
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<CliOptions, CliError> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        parse_args(&args)
    }

    #[test]
    fn accepts_the_registry_launch_line_and_absl_booleans() {
        let options = parse(&["--uid=", "--nodebug", "--notices", "--alsologtostderr"]);
        assert_eq!(
            options,
            Ok(CliOptions {
                uid: Some(String::new()),
                notices: true,
                also_log_to_stderr: true,
                ..CliOptions::default()
            })
        );
    }

    #[test]
    fn takes_values_inline_or_next() {
        let options = parse(&["--script", "s.yaml", "--journal=/tmp/j", "--debug=true"]);
        let Ok(options) = options else {
            panic!("{options:?}");
        };
        assert_eq!(options.script, Some(PathBuf::from("s.yaml")));
        assert_eq!(options.journal, Some(PathBuf::from("/tmp/j")));
        assert!(options.debug);
    }

    #[test]
    fn refuses_unknown_flags_and_positionals() {
        assert_eq!(
            parse(&["--bogus"]),
            Err(CliError::UnknownFlag("bogus".into()))
        );
        assert_eq!(parse(&["x"]), Err(CliError::Positional("x".into())));
        assert_eq!(
            parse(&["--script"]),
            Err(CliError::MissingValue("script".into()))
        );
    }
}
