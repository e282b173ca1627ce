//! The DSH plugin's JavaScript as the house sees it: every `.js`, `.mjs` and `.cjs` file of
//! `dsh-plugin/` (npm's installs, the per-platform binary packages and build output left
//! out), and which of them imports which, read from the relative specifiers of `import …
//! from`, `import(…)`, `export … from` and `require(…)` outside comments (a JSDoc
//! `@import` names a type, and loads nothing).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// Directories of `dsh-plugin/` that hold no source of the project's.
const NOT_SOURCE: [&str; 3] = ["node_modules", "target", "npm"];

/// Every source file of the plugin (JavaScript and Rust), under `root`.
pub fn source_files(root: &Path) -> Vec<PathBuf> {
    let enter = |name: &str| !NOT_SOURCE.contains(&name) && !name.starts_with('.');
    crate::walk::files_below(root, enter)
        .into_iter()
        .filter(|path| {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            [".js", ".mjs", ".cjs", ".rs"]
                .iter()
                .any(|ext| name.ends_with(ext))
        })
        .collect()
}

/// `text` with its `//` and `/* */` comments blanked out (strings and template literals
/// kept, so a `//` inside a URL stays).
pub fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' {
                if let Some(escaped) = chars.next() {
                    out.push(escaped);
                }
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && skipped == '/' {
                        break;
                    }
                    last = skipped;
                }
            }
            _ => {
                if matches!(c, '\'' | '"' | '`') {
                    quote = Some(c);
                }
                out.push(c);
            }
        }
    }
    out
}

/// The relative specifiers (`./x.js`, `../lib/adapter.js`) a JavaScript text imports.
pub fn relative_specifiers(text: &str) -> Vec<String> {
    let text = without_comments(text);
    let text = text.as_str();
    let mut found = Vec::new();
    for opener in ["from ", "import(", "require(", "import "] {
        let mut rest = text;
        while let Some(at) = rest.find(opener) {
            rest = &rest[at + opener.len()..];
            let quoted = rest.trim_start();
            let Some(quote) = quoted
                .chars()
                .next()
                .filter(|c| matches!(c, '\'' | '"' | '`'))
            else {
                continue;
            };
            let body = &quoted[1..];
            if let Some(end) = body.find(quote) {
                let specifier = &body[..end];
                if specifier.starts_with("./") || specifier.starts_with("../") {
                    found.push(specifier.to_owned());
                }
            }
        }
    }
    found
}

/// `base` joined with `relative`, with `.` and `..` folded away.
fn joined(base: &Path, relative: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for component in base.join(relative).components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Which JavaScript files each JavaScript file of `files` imports (only files in `files`).
pub fn import_edges(files: &[(PathBuf, String)]) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let known: BTreeSet<&PathBuf> = files.iter().map(|(path, _)| path).collect();
    files
        .iter()
        .map(|(path, text)| {
            let dir = path.parent().unwrap_or(Path::new(""));
            let targets = relative_specifiers(text)
                .into_iter()
                .map(|specifier| joined(dir, &specifier))
                .filter(|target| known.contains(target) && target != path)
                .collect();
            (path.clone(), targets)
        })
        .collect()
}

/// Every pair of files that import each other.
pub fn mutual_imports(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<String> {
    let mut pairs = Vec::new();
    for (a, targets) in edges {
        for b in targets {
            if a < b && edges.get(b).is_some_and(|back| back.contains(a)) {
                pairs.push(format!("{} <-> {}", a.display(), b.display()));
            }
        }
    }
    pairs
}
