//! Tests of the session ledger, the removal of a session's files and the sweep.

use super::*;

/// The five things 1.3.0 keeps for `id` in `home`, as the fake writes them.
fn plant_session(home: &Path, id: &str, cwd: &Path) -> crate::TestResult {
    let dir = home.join(SERVER_DIR);
    std::fs::create_dir_all(dir.join("conversations"))?;
    std::fs::create_dir_all(dir.join("brain").join(id))?;
    std::fs::write(dir.join("brain").join(id).join("task.md"), b"plan")?;
    for ending in [".db", ".db-wal", ".db-shm"] {
        std::fs::write(
            dir.join("conversations").join(format!("{id}{ending}")),
            b"x",
        )?;
    }
    let meta = serde_json::json!({ "cwd": cwd }).to_string();
    std::fs::write(dir.join("conversations").join(format!("{id}.meta")), meta)?;
    Ok(())
}

fn left(home: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for sub in ["conversations", "brain"] {
        if let Ok(entries) = std::fs::read_dir(home.join(SERVER_DIR).join(sub)) {
            names.extend(
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned()),
            );
        }
    }
    names.sort();
    names
}

fn env_for(home: &Path) -> Vec<(OsString, OsString)> {
    vec![("GEMINI_HOME".into(), home.as_os_str().to_owned())]
}

#[test]
fn a_disposed_process_leaves_none_of_its_sessions_and_nothing_else_is_touched() -> crate::TestResult
{
    let root = tempfile::tempdir()?;
    let home = root.path().join("home");
    let scratch = root.path().join("antigravity-acp-abc123");
    std::fs::create_dir(&scratch)?;
    let elsewhere = root.path().join("other-client");
    plant_session(&home, "other", &elsewhere)?;
    std::fs::write(home.join(SERVER_DIR).join("acp_token.json"), b"token")?;
    let mut ledger =
        ConversationLedger::start(&scratch, &env_for(&home)).ok_or("no ledger started")?;
    for id in ["s1", "s2"] {
        ledger.opening();
        plant_session(&home, id, &scratch.join(id))?;
        ledger.opened(Some(id));
    }
    let ledger_file = ledger_path(&scratch).ok_or("no ledger path")?;
    assert!(
        ledger_file.is_file(),
        "the ledger is beside the scratch folder"
    );
    ledger.remove_all(&scratch);
    assert_eq!(left(&home), names_of("other"));
    assert_eq!(
        std::fs::read(home.join(SERVER_DIR).join("acp_token.json"))?,
        b"token"
    );
    assert!(!ledger_file.exists(), "the ledger outlived its process");
    Ok(())
}

/// A home, a scratch folder named `antigravity-acp-<name>` beside it, and its ledger.
struct Process {
    root: tempfile::TempDir,
    home: PathBuf,
    scratch: PathBuf,
    ledger: ConversationLedger,
}

fn process(name: &str) -> Result<Process, test_support::Failure> {
    let root = tempfile::tempdir()?;
    let home = root.path().join("home");
    let scratch = root.path().join(format!("antigravity-acp-{name}"));
    std::fs::create_dir(&scratch)?;
    let ledger = ConversationLedger::start(&scratch, &env_for(&home)).ok_or("no ledger started")?;
    Ok(Process {
        root,
        home,
        scratch,
        ledger,
    })
}

/// The five names of the session `id` in `conversations/` and `brain/`, sorted.
fn names_of(id: &str) -> Vec<String> {
    let mut names: Vec<String> = std::iter::once(id.to_owned())
        .chain(SESSION_FILE_ENDINGS.iter().map(|e| format!("{id}{e}")))
        .collect();
    names.sort();
    names
}

#[test]
fn an_unanswered_session_is_found_by_its_cwd() -> crate::TestResult {
    let Process {
        root,
        home,
        scratch,
        mut ledger,
    } = process("unanswered")?;
    plant_session(&home, "other", &root.path().join("antigravity-acp-another"))?;
    ledger.opening();
    plant_session(&home, "lost", &scratch.join("cwd"))?;
    ledger.remove_all(&scratch);
    assert_eq!(left(&home), names_of("other"));
    Ok(())
}

/// A `session/new` that ended in an error (the server killed before its answer) still
/// has its files found by their `cwd`, though a later session opened fine.
#[test]
fn a_session_new_that_failed_is_found_by_its_cwd() -> crate::TestResult {
    let Process {
        home,
        scratch,
        mut ledger,
        ..
    } = process("failed")?;
    ledger.opening();
    plant_session(&home, "lost", &scratch.join("cwd1"))?;
    ledger.opened(None);
    ledger.opening();
    plant_session(&home, "kept-by-id", &scratch.join("cwd2"))?;
    ledger.opened(Some("kept-by-id"));
    ledger.remove_all(&scratch);
    assert!(left(&home).is_empty(), "{:?}", left(&home));
    Ok(())
}

#[test]
fn ids_that_are_not_plain_names_name_no_file() -> crate::TestResult {
    let Process {
        root,
        home,
        scratch,
        mut ledger,
    } = process("ids")?;
    plant_session(&home, "kept", &root.path().join("elsewhere"))?;
    for id in ["../kept", "", "kept/../kept", "a b", &"x".repeat(129)] {
        ledger.opened(Some(id));
    }
    assert!(ledger.sessions.is_empty(), "{:?}", ledger.sessions);
    ledger.remove_all(&scratch);
    assert_eq!(left(&home), names_of("kept"));
    Ok(())
}

/// The sweep removes a dead owner's sessions, scratch folder and ledger, and leaves a
/// live owner's (its ledger locked) as they are.
#[test]
fn the_sweep_takes_only_what_dead_owners_left() -> crate::TestResult {
    let root = tempfile::tempdir()?;
    let home = root.path().join("home");
    let scratch_root = root.path().join("scratch");
    let dead = scratch_root.join("antigravity-acp-dead01");
    let live = scratch_root.join("antigravity-acp-live01");
    std::fs::create_dir_all(&dead)?;
    std::fs::create_dir_all(&live)?;
    let mut live_ledger =
        ConversationLedger::start(&live, &env_for(&home)).ok_or("no live ledger")?;
    plant_session(&home, "live-session", &live.join("cwd"))?;
    live_ledger.opened(Some("live-session"));
    {
        let dead_ledger =
            ConversationLedger::start(&dead, &env_for(&home)).ok_or("no dead ledger")?;
        let mut dead_ledger = dead_ledger;
        plant_session(&home, "dead-session", &dead.join("cwd"))?;
        dead_ledger.opened(Some("dead-session"));
        // A crash: the handle (and its lock) goes, the files stay.
        drop(dead_ledger);
    }
    sweep(&scratch_root);
    assert_eq!(
        left(&home),
        [
            "live-session",
            "live-session.db",
            "live-session.db-shm",
            "live-session.db-wal",
            "live-session.meta"
        ]
    );
    assert!(!dead.exists(), "the dead owner's scratch folder was left");
    assert!(
        !ledger_path(&dead).ok_or("path")?.exists(),
        "the dead ledger was left"
    );
    assert!(live.is_dir(), "the live owner's scratch folder was swept");
    assert!(
        ledger_path(&live).ok_or("path")?.exists(),
        "the live ledger was swept"
    );
    live_ledger.remove_all(&live);
    Ok(())
}

#[test]
fn a_ledger_without_a_complete_home_line_is_left() -> crate::TestResult {
    let root = tempfile::tempdir()?;
    let ledger = root.path().join("antigravity-acp-new.sessions");
    std::fs::write(&ledger, b"home /somewhere")?;
    sweep(root.path());
    assert!(ledger.exists());
    assert_eq!(parse_ledger("home relative\n"), None);
    Ok(())
}

/// A session the server keeps under a cwd outside the process's scratch folder (a server
/// whose `.meta` names another folder, or none) is still removed: by the id the ledger
/// recorded when `session/new` was answered.
#[test]
fn a_recorded_session_is_removed_even_when_its_meta_names_another_folder() -> crate::TestResult {
    let root = tempfile::tempdir()?;
    let home = root.path().join("home");
    let scratch = root.path().join("antigravity-acp-abc123");
    std::fs::create_dir(&scratch)?;
    let mut ledger =
        ConversationLedger::start(&scratch, &env_for(&home)).ok_or("no ledger started")?;
    ledger.opening();
    plant_session(&home, "s1", &root.path().join("not-the-scratch"))?;
    ledger.opened(Some("s1"));
    ledger.remove_all(&scratch);
    assert_eq!(left(&home), Vec::<String>::new());
    Ok(())
}

/// A `.sessions` file in the scratch root that is not named as the adapter names its
/// ledgers (`antigravity-acp-<name>.sessions`) is another program's: never swept, nor
/// the sessions it lists.
#[test]
fn a_ledger_not_named_as_ours_is_never_swept() -> crate::TestResult {
    let root = tempfile::tempdir()?;
    let home = root.path().join("home");
    plant_session(&home, "s9", &root.path().join("elsewhere"))?;
    let foreign = root.path().join("other-tool-abc.sessions");
    std::fs::write(&foreign, format!("home {}\nsession s9\n", home.display()))?;
    sweep(root.path());
    assert!(foreign.is_file(), "another program's file was swept");
    assert_eq!(left(&home), names_of("s9"));
    Ok(())
}
