//! Paths that leave the repository: every relative path a contributor reads that climbs
//! out of it, whether a Markdown link's target (taken from the linking file's folder, as
//! Markdown does) or a word in a code span, in the docs or in the sources' comments (taken
//! from the repository's root, as the project writes its paths, unless it names something
//! the repository has from a folder of its own, like a scenario's `../scenario.schema.json`).
//! What a contributor is sent to must be in the repository.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// Folders that hold no text of the project's.
const NOT_OURS: [&str; 4] = ["target", "node_modules", "npm", "fixtures"];

/// Kinds of file a contributor reads.
const READ: [&str; 9] = [
    ".md", ".rs", ".js", ".mjs", ".cjs", ".sh", ".yaml", ".toml", ".yml",
];

/// The repository as a reader sees it: every file a contributor reads, with its text, and
/// every path it holds (relative to its root).
pub struct Repository {
    pub root: PathBuf,
    pub files: Vec<(PathBuf, String)>,
    pub paths: BTreeSet<PathBuf>,
}

/// The repository at `root`.
pub fn read_repository(root: &Path) -> Repository {
    let enter = |name: &str| (!NOT_OURS.contains(&name) && !name.starts_with('.')) || name == ".ci";
    let all = crate::walk::files_below(root, enter);
    let paths = all
        .iter()
        .filter_map(|path| path.strip_prefix(root).ok())
        .flat_map(Path::ancestors)
        .filter(|path| !path.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .collect();
    let files = all
        .into_iter()
        .filter(|path| {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            READ.iter().any(|ext| name.ends_with(ext))
        })
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            (path, text)
        })
        .collect();
    Repository {
        root: root.to_path_buf(),
        files,
        paths,
    }
}

/// The targets of Markdown links (`[x](target)`) in `text`.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            targets.push(rest[..end].to_owned());
        }
    }
    targets
}

/// The words of the code spans in `text`.
fn code_span_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for line in text.lines() {
        let spans: Vec<&str> = line.split('`').collect();
        for span in spans.iter().skip(1).step_by(2).take((spans.len() - 1) / 2) {
            words.extend(span.split_whitespace().map(str::to_owned));
        }
    }
    words
}

/// Whether `relative`, taken from `dir` (a folder inside `root`), ends outside `root`.
fn climbs_out(root: &Path, dir: &Path, relative: &str) -> bool {
    let Ok(inside) = dir.strip_prefix(root) else {
        return false;
    };
    let mut depth = inside.components().count() as isize;
    for component in Path::new(relative).components() {
        match component {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            _ => {}
        }
        if depth < 0 {
            return true;
        }
    }
    false
}

/// Whether the repository holds `relative` with its leading parent steps taken from some folder
/// of its own: a path ending in what follows them.
fn held_from_some_folder(paths: &BTreeSet<PathBuf>, relative: &str) -> bool {
    let rest: PathBuf = Path::new(relative)
        .components()
        .skip_while(|c| matches!(c, Component::ParentDir | Component::CurDir))
        .collect();
    !rest.as_os_str().is_empty() && paths.iter().any(|path| path.ends_with(&rest))
}

/// Each cited path of the repository's files that leaves it, as `file: path`.
pub fn paths_leaving(repository: &Repository) -> Vec<String> {
    let root = repository.root.as_path();
    let mut leaving = Vec::new();
    for (path, text) in &repository.files {
        let dir = path.parent().unwrap_or(root);
        let links = link_targets(text).into_iter().map(|target| (target, false));
        let spans = code_span_words(text).into_iter().map(|word| (word, true));
        for (word, in_code) in links.chain(spans) {
            let word = word.trim_matches(|c: char| matches!(c, '"' | '\'' | ',' | ';' | '(' | ')'));
            if !word.contains("../") {
                continue;
            }
            let out = climbs_out(root, dir, word)
                || in_code
                    && climbs_out(root, root, word)
                    && !held_from_some_folder(&repository.paths, word);
            if out {
                let shown = path.strip_prefix(root).unwrap_or(path);
                leaving.push(format!("{}: {word}", shown.display()));
            }
        }
    }
    leaving
}
