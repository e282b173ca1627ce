//! Where the cache is by default (per platform, from the environment), which cache
//! folders the installer refuses, and that the cache's lock is really taken.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::*;

/// A variable lookup over a fixed list.
fn vars(list: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + use<> {
    let list: Vec<(String, String)> = list
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| {
        list.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| OsString::from(v))
    }
}

/// `unix_path` made absolute on this system: as is on Unix, on drive `C:` on Windows.
fn abs(unix_path: &str) -> String {
    if cfg!(windows) {
        format!("C:{unix_path}")
    } else {
        unix_path.to_owned()
    }
}

fn tail(platform: &str) -> PathBuf {
    Path::new("antigravity-acp").join("1.3.0").join(platform)
}

#[test]
fn linux_prefers_xdg_cache_home_then_home_dot_cache() -> crate::TestResult {
    let xdg = vars(&[("XDG_CACHE_HOME", &abs("/xdg")), ("HOME", &abs("/home/u"))]);
    assert_eq!(
        cache_dir_for("linux", "linux-x86_64", &xdg)?,
        Path::new(&abs("/xdg")).join(tail("linux-x86_64"))
    );
    let home = vars(&[("HOME", &abs("/home/u"))]);
    assert_eq!(
        cache_dir_for("linux", "linux-x86_64", &home)?,
        Path::new(&abs("/home/u/.cache")).join(tail("linux-x86_64"))
    );
    // An empty or relative XDG_CACHE_HOME is ignored, as the XDG rules say.
    for ignored in ["", "relative/cache"] {
        let lookup = vars(&[("XDG_CACHE_HOME", ignored), ("HOME", &abs("/home/u"))]);
        assert_eq!(
            cache_dir_for("freebsd", "linux-x86_64", &lookup)?,
            Path::new(&abs("/home/u/.cache")).join(tail("linux-x86_64")),
            "XDG_CACHE_HOME={ignored:?}"
        );
    }
    Ok(())
}

#[test]
fn macos_uses_library_caches_and_windows_local_app_data() -> crate::TestResult {
    let lookup = vars(&[
        ("HOME", &abs("/Users/u")),
        ("XDG_CACHE_HOME", &abs("/xdg")),
        ("LOCALAPPDATA", &abs("/appdata")),
    ]);
    assert_eq!(
        cache_dir_for("macos", "darwin-aarch64", &lookup)?,
        Path::new(&abs("/Users/u/Library/Caches")).join(tail("darwin-aarch64"))
    );
    assert_eq!(
        cache_dir_for("windows", "windows-x86_64", &lookup)?,
        Path::new(&abs("/appdata")).join(tail("windows-x86_64"))
    );
    Ok(())
}

#[test]
fn no_usable_variable_is_no_cache_dir() {
    for (os, list) in [
        ("linux", vec![]),
        ("linux", vec![("HOME", ""), ("XDG_CACHE_HOME", "")]),
        ("linux", vec![("HOME", "home/u")]),
        ("macos", vec![("XDG_CACHE_HOME", "/xdg")]),
        ("windows", vec![("HOME", "/home/u")]),
    ] {
        let result = cache_dir_for(os, "linux-x86_64", &vars(&list));
        assert!(
            matches!(result, Err(InstallError::NoCacheDir)),
            "{os} {list:?}: {result:?}"
        );
    }
}

/// The public function reads this process's environment: its answer is the rule's answer
/// for the real variables, and never an empty or relative path.
#[test]
fn the_default_is_the_rule_applied_to_this_process() -> crate::TestResult {
    let platform = super::super::current_platform()?;
    let expected = cache_dir_for(std::env::consts::OS, platform, &|name| {
        std::env::var_os(name)
    });
    match (default_cache_dir(platform), expected) {
        (Ok(found), Ok(expected)) => {
            assert_eq!(found, expected);
            assert!(found.is_absolute(), "{}", found.display());
            assert!(found.ends_with(tail(platform)), "{}", found.display());
        }
        (Err(InstallError::NoCacheDir), Err(InstallError::NoCacheDir)) => {}
        (found, expected) => return Err(format!("{found:?} vs {expected:?}").into()),
    }
    Ok(())
}

#[test]
fn an_empty_or_relative_cache_folder_is_refused() -> crate::TestResult {
    for (root, says) in [("", "empty"), ("cache", "relative"), ("./a/b", "relative")] {
        match check_cache_root(Path::new(root)) {
            Err(InstallError::BadCacheDir(why)) => assert!(why.contains(says), "{root}: {why}"),
            other => return Err(format!("{root:?} was not refused: {other:?}").into()),
        }
    }
    check_cache_root(&std::env::temp_dir())?;
    Ok(())
}

#[test]
fn the_lock_is_exclusive_until_dropped() -> crate::TestResult {
    let dir = tempfile::tempdir()?;
    let first = CacheLayout::new(dir.path().to_path_buf());
    let second = CacheLayout::new(dir.path().to_path_buf());
    let held = first.try_lock()?.ok_or("a free lock was not taken")?;
    assert!(
        second.try_lock()?.is_none(),
        "a second holder took the lock while the first held it"
    );
    drop(held);
    let again = second
        .try_lock()?
        .ok_or("the lock was not released on drop")?;
    assert!(first.try_lock()?.is_none());
    drop(again);
    // The blocking lock takes a free lock at once.
    let _blocking = first.lock()?;
    assert!(second.try_lock()?.is_none());
    Ok(())
}
