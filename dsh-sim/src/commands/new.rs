//! `dsh-sim new AREA/NAME [--from EXISTING]`: starts a scenario at
//! `<scenarios>/AREA/NAME.yaml`, from a commented skeleton or a copy of another scenario,
//! always with the schema line first and `covers: []` (claims are added by hand, with
//! their rows in `CLAIMS.md`). It never overwrites a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::scenario::{SCHEMA_FILE_NAME, SCHEMA_LINE_PREFIX};

/// A new scenario's text after its schema line: it runs and passes as it is, and its
/// comments say where each part goes.
const SKELETON_BODY: &str = r#"# A scenario: the fake server's script, DSH's side, and what must hold at the end.
# scenarios/README.md documents every key; editors complete them from the schema above.
name: TODO say in one sentence what this scenario shows
# The claims this scenario proves (C01..C73, B01..B08). Name the file as a proof of each
# in scenarios/CLAIMS.md; `dsh-sim lint` checks both directions.
covers: []
# While it reproduces a bug that is not fixed yet, say why and where it is tracked; the
# runner then reports XFAIL, and fails once the scenario passes (remove the line then).
# known_failure: "what is still wrong; tracked in issue NN"

# The fake server: what the real server did, turn by turn.
fake:
  turns:
    - match: { prompt_contains: "Say hello" }
      steps:
        - thought: "The user wants a greeting."
        - text: "Hello from the fake server."
        # - call: { tool: read_file, args: { path: notes.txt } }   # a DSH tool, the 1.3.0 way

# DSH: the tools it offers and what the user says.
dsh:
  tools: []
  # tools:
  #   - name: read_file
  #     schema: { type: object, properties: { path: { type: string } }, required: [path] }
  #     result: "buy milk"            # or `error: "..."`, or `permission: deny`
  chat:
    - user: "Say hello"

# What must hold at the end (wire checks under `expect.wire`).
expect:
  finish: stop
  generations: 1
  final_text: "Hello from the fake server."
  wire:
    prompts: 1
"#;

/// Why a scenario could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The name is not `AREA/NAME` in lowercase snake case.
    #[error(
        "`{0}` is not AREA/NAME: two parts, each lowercase snake_case ([a-z][a-z0-9_]*), e.g. tool_calls/denial_after_retry"
    )]
    BadName(String),
    /// The scenarios folder does not exist.
    #[error(
        "{}: no scenarios folder here; run from the repository root or pass --root",
        .0.display()
    )]
    NoRoot(PathBuf),
    /// The scenario exists already.
    #[error("{}: exists already; choose another name (nothing was written)", .0.display())]
    Exists(PathBuf),
    /// The copied scenario does not parse (once its `covers` is reset).
    #[error("cannot copy it: {0}")]
    BadSource(#[from] crate::scenario::ScenarioError),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
}

/// Whether `part` is lowercase snake case: `[a-z][a-z0-9_]*`.
fn is_snake(part: &str) -> bool {
    let mut bytes = part.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// `<root>/AREA/NAME.yaml`, once `area_name` is checked.
pub fn scenario_path(root: &Path, area_name: &str) -> Result<PathBuf, ScaffoldError> {
    match area_name.split('/').collect::<Vec<_>>()[..] {
        [area, name] if is_snake(area) && is_snake(name) => {
            Ok(root.join(area).join(format!("{name}.yaml")))
        }
        _ => Err(ScaffoldError::BadName(area_name.to_owned())),
    }
}

/// The scenario's text: the schema line, then the skeleton or the copy of `from` (its
/// own schema line dropped, its `covers` reset to `[]`).
fn scenario_text(from: Option<&Path>) -> Result<String, ScaffoldError> {
    let first_line = format!("{SCHEMA_LINE_PREFIX}../{SCHEMA_FILE_NAME}\n");
    let Some(source) = from else {
        return Ok(first_line + SKELETON_BODY);
    };
    let text = std::fs::read_to_string(source).map_err(|source_error| ScaffoldError::Io {
        path: source.to_owned(),
        source: source_error,
    })?;
    let body = reset_covers(
        text.lines()
            .filter(|line| !line.starts_with(SCHEMA_LINE_PREFIX)),
    );
    let copy = first_line + &body;
    crate::scenario::parse(&copy, source)?;
    Ok(copy)
}

/// The lines joined, with a top-level `covers:` (flow or block list) replaced by
/// `covers: []`.
fn reset_covers<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    let mut in_block_list = false;
    for line in lines {
        if in_block_list && (line.starts_with(' ') || line.starts_with('-')) {
            continue;
        }
        in_block_list = false;
        if let Some(rest) = line.strip_prefix("covers:") {
            in_block_list = rest.trim().is_empty();
            out.push_str("covers: []\n");
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Writes the new scenario at `<root>/AREA/NAME.yaml` and returns its path.
pub fn create(root: &Path, area_name: &str, from: Option<&Path>) -> Result<PathBuf, ScaffoldError> {
    let path = scenario_path(root, area_name)?;
    if !root.is_dir() {
        return Err(ScaffoldError::NoRoot(root.to_owned()));
    }
    if path.exists() {
        return Err(ScaffoldError::Exists(path));
    }
    let text = scenario_text(from)?;
    let io = |source| ScaffoldError::Io {
        path: path.clone(),
        source,
    };
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).map_err(io)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::AlreadyExists => ScaffoldError::Exists(path.clone()),
            _ => io(source),
        })?;
    file.write_all(text.as_bytes()).map_err(io)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_two_snake_case_parts() {
        let root = Path::new("scenarios");
        assert_eq!(
            scenario_path(root, "tool_calls/retry_2").ok(),
            Some(root.join("tool_calls/retry_2.yaml"))
        );
        for bad in [
            "tool_calls",
            "a/b/c",
            "../etc/x",
            "a/..",
            "Tool/x",
            "a/x.yaml",
            "a/-x",
            "a/",
            "/x",
            "2a/x",
        ] {
            assert!(scenario_path(root, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn covers_is_reset_in_flow_and_block_form() {
        let flow = "name: a\ncovers: [C01, C02]\ndsh: {}\n";
        assert_eq!(reset_covers(flow.lines()), "name: a\ncovers: []\ndsh: {}\n");
        let block = "name: a\ncovers:\n  - C01\n  - C02\ndsh: {}\n";
        assert_eq!(
            reset_covers(block.lines()),
            "name: a\ncovers: []\ndsh: {}\n"
        );
    }
}
