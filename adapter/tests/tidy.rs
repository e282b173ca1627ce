//! House rules as a test, over every Rust source file of the workspace: no file over 800
//! lines, a `//!` doc at the top of every module, and no `unwrap`/`expect` in the
//! adapter's library code outside its test modules.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 800;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

fn sources() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut files = Vec::new();
    for krate in ["adapter", "fake-antigravity", "dsh-sim"] {
        rust_files(&root.join(krate), &mut files);
    }
    assert!(
        files.len() > 10,
        "found too few sources under {}",
        root.display()
    );
    files
}

#[test]
fn no_source_file_exceeds_the_line_budget() {
    let over: Vec<String> = sources()
        .into_iter()
        .filter_map(|path| {
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", path.display()))
        })
        .collect();
    assert!(over.is_empty(), "split these by responsibility: {over:#?}");
}

#[test]
fn every_module_opens_with_a_doc_comment() {
    let undocumented: Vec<String> = sources()
        .into_iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            // Inner attributes (`#![allow(..)]`) may come first; the doc must follow them.
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty() && !l.starts_with("#!["))
                .unwrap_or_default();
            !first.starts_with("//!")
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        undocumented.is_empty(),
        "add a `//!` doc saying what each owns: {undocumented:#?}"
    );
}

#[test]
fn adapter_library_code_has_no_unwrap_or_expect() {
    let mut files = Vec::new();
    rust_files(&workspace_root().join("adapter/src"), &mut files);
    let mut offenders = Vec::new();
    for path in files {
        if path.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // Everything from the first test module on is test code.
        let library = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (number, line) in library.lines().enumerate() {
            if line.contains(".unwrap()") || line.contains(".expect(") {
                offenders.push(format!("{}:{}", path.display(), number + 1));
            }
        }
    }
    assert!(offenders.is_empty(), "use errors instead: {offenders:#?}");
}
