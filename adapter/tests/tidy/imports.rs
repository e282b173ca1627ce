//! The import graph of a crate's library sources, read from the text: which file's code
//! names a path that lives in which other file. A file names another through `crate::`,
//! `super::` and `self::` paths, use groups (`use crate::a::{b, c::D}`) and bare paths
//! that start with one of its own child modules; the path resolves to the longest
//! prefix that is a file. Not imports: comments, test code (from the first
//! `#[cfg(test)]` on, and `tests.rs` files), and a module's re-exports of its own
//! children (`pub use`), which are its facade rather than a dependency. The crate root
//! (`lib.rs`) is all facade, so nothing counts as importing it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path from the crate root (`["runner", "judge", "wire"]`).
pub type ModPath = Vec<String>;

/// Which file each module is, and which modules each file imports.
#[derive(Debug, Default)]
pub struct ImportGraph {
    /// The file of each module, relative to the crate's `src/`.
    pub files: BTreeMap<ModPath, PathBuf>,
    /// The modules each module imports (never itself, never the crate root).
    pub edges: BTreeMap<ModPath, BTreeSet<ModPath>>,
}

/// The module a source file under `src/` is (`None`: not part of the library tree).
fn module_of(relative: &Path) -> Option<ModPath> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?.to_owned();
    if parts.first().is_some_and(|p| p == "bin") || stem == "main" || stem == "tests" {
        return None;
    }
    if parts.iter().any(|p| p == "tests") {
        return None;
    }
    match stem.as_str() {
        "lib" if parts.is_empty() => {}
        "mod" => {}
        _ => parts.push(stem),
    }
    Some(parts)
}

/// The library code of a file: before its first test module, without comment lines and
/// without re-export statements.
fn library_code(text: &str) -> String {
    let before_tests = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut code = String::new();
    let mut in_reexport = false;
    for line in before_tests.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        let starts_reexport = trimmed.starts_with("pub use ")
            || (trimmed.starts_with("pub(") && trimmed.contains(") use "));
        if starts_reexport {
            in_reexport = true;
        }
        if in_reexport {
            if line.contains(';') {
                in_reexport = false;
            }
            continue;
        }
        code.push_str(line);
        code.push('\n');
    }
    code
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Reads a path starting at `chars[at]`: its segments, and every full path a use group
/// after it expands to. Returns the paths and where reading stopped.
fn read_path(chars: &[char], mut at: usize) -> (Vec<Vec<String>>, usize) {
    let mut segments = Vec::new();
    loop {
        let start = at;
        while at < chars.len() && is_ident_char(chars[at]) {
            at += 1;
        }
        if at == start {
            break;
        }
        segments.push(chars[start..at].iter().collect::<String>());
        if chars.get(at) == Some(&':') && chars.get(at + 1) == Some(&':') {
            at += 2;
            if chars.get(at) == Some(&'{') {
                let (items, end) = read_group(chars, at + 1);
                let mut paths = vec![segments.clone()];
                for item in items {
                    let mut full = segments.clone();
                    full.extend(item);
                    paths.push(full);
                }
                return (paths, end);
            }
            continue;
        }
        break;
    }
    (vec![segments], at)
}

/// Reads the items of a use group from just after its `{` to just after its `}`.
fn read_group(chars: &[char], mut at: usize) -> (Vec<Vec<String>>, usize) {
    let mut items = Vec::new();
    while at < chars.len() {
        let c = chars[at];
        if c == '}' {
            return (items, at + 1);
        }
        if is_ident_char(c) {
            let (paths, end) = read_path(chars, at);
            items.extend(
                paths
                    .into_iter()
                    .filter(|p| !p.is_empty() && p[0] != "self"),
            );
            at = end;
            // `as alias`: skip the alias.
            let rest: String = chars[at..chars.len().min(at + 4)].iter().collect();
            if rest.starts_with(" as ") {
                at += 4;
                while at < chars.len() && is_ident_char(chars[at]) {
                    at += 1;
                }
            }
            continue;
        }
        at += 1;
    }
    (items, at)
}

/// Every path the code names that starts with a module keyword or a name in `heads`.
fn named_paths(code: &str, heads: &BTreeSet<String>) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let boundary = at == 0 || !(is_ident_char(chars[at - 1]) || chars[at - 1] == ':');
        if boundary && is_ident_char(chars[at]) {
            let (paths, end) = read_path(&chars, at);
            for path in paths {
                let head = path.first().map(String::as_str).unwrap_or_default();
                if path.len() > 1
                    && (matches!(head, "crate" | "super" | "self") || heads.contains(head))
                {
                    found.push(path);
                }
            }
            at = end.max(at + 1);
        } else {
            at += 1;
        }
    }
    found
}

impl ImportGraph {
    /// The graph of sources given as (path under `src/`, text).
    pub fn of_sources(sources: &[(PathBuf, String)]) -> Self {
        let mut graph = Self::default();
        let mut texts = BTreeMap::new();
        for (relative, text) in sources {
            if let Some(module) = module_of(relative) {
                graph.files.insert(module.clone(), relative.clone());
                texts.insert(module, library_code(text));
            }
        }
        for (module, code) in &texts {
            let children: BTreeSet<String> = graph
                .files
                .keys()
                .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
                .map(|m| m[module.len()].clone())
                .collect();
            let mut imports = BTreeSet::new();
            for path in named_paths(code, &children) {
                let Some(target) = graph.resolve(module, &path) else {
                    continue;
                };
                if &target != module && !target.is_empty() {
                    imports.insert(target);
                }
            }
            graph.edges.insert(module.clone(), imports);
        }
        graph
    }

    /// The graph of the crate whose sources are under `src`.
    pub fn of_crate(src: &Path) -> Self {
        let mut files = Vec::new();
        super::rust_files(src, &mut files);
        let sources: Vec<(PathBuf, String)> = files
            .into_iter()
            .map(|path| {
                let text = std::fs::read_to_string(&path).unwrap();
                (path.strip_prefix(src).unwrap().to_path_buf(), text)
            })
            .collect();
        Self::of_sources(&sources)
    }

    /// The file module `path`, named inside `from`, lives in.
    fn resolve(&self, from: &[String], path: &[String]) -> Option<ModPath> {
        let mut base: Vec<String>;
        let mut rest = path;
        match path.first().map(String::as_str) {
            Some("crate") => {
                base = Vec::new();
                rest = &path[1..];
            }
            Some("self") => {
                base = from.to_vec();
                rest = &path[1..];
            }
            Some("super") => {
                base = from.to_vec();
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            _ => base = from.to_vec(),
        }
        base.extend(rest.iter().cloned());
        (0..=base.len())
            .rev()
            .map(|len| base[..len].to_vec())
            .find(|candidate| self.files.contains_key(candidate))
    }

    /// Every pair of files that import each other, by file name.
    pub fn mutual_imports(&self) -> Vec<String> {
        let mut pairs = Vec::new();
        for (a, targets) in &self.edges {
            for b in targets {
                if a < b && self.edges.get(b).is_some_and(|back| back.contains(a)) {
                    pairs.push(format!(
                        "{} <-> {}",
                        self.files[a].display(),
                        self.files[b].display()
                    ));
                }
            }
        }
        pairs
    }

    /// Every import from one top-level room into another that `layers` (rooms, from the
    /// bottom up; rooms in one layer are peers) does not allow: a room may import only
    /// rooms of lower layers.
    pub fn wrong_way_imports(&self, layers: &[&[&str]]) -> Vec<String> {
        let layer_of = |module: &ModPath| {
            let room = module.first()?;
            layers
                .iter()
                .position(|layer| layer.contains(&room.as_str()))
        };
        let mut wrong = Vec::new();
        for (a, targets) in &self.edges {
            for b in targets {
                if a.first() == b.first() {
                    continue;
                }
                if let (Some(from), Some(to)) = (layer_of(a), layer_of(b))
                    && to >= from
                {
                    wrong.push(format!(
                        "{} imports {}",
                        self.files[a].display(),
                        self.files[b].display()
                    ));
                }
            }
        }
        wrong
    }
}
