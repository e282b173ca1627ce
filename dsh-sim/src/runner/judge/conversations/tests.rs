//! The B08 judge on hand-made homes: it passes on a home the run left as it was, and
//! names each kind of breach (a leftover, a dead owner not swept, a touched file).

use std::path::{Path, PathBuf};

use super::*;
use crate::runner::gemini_home::make_gemini_home;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A workspace with a signed-in home and a scratch root, and the scenario's watch.
struct Setup {
    _root: tempfile::TempDir,
    home: PathBuf,
    scratch_root: PathBuf,
    watch: ConversationWatch,
}

fn setup(extra_yaml: &str) -> Result<Setup, Box<dyn std::error::Error>> {
    let yaml = format!(
        "name: t\ncovers: []\n{extra_yaml}dsh:\n  gemini_home: {{ auth_type: oauth-personal, token: valid }}\n  leftovers:\n    - {{ owner: dead, sessions: 2 }}\n    - {{ owner: live, sessions: 1 }}\n  chat:\n    - user: hi\n"
    );
    let scenario = crate::scenario::parse(&yaml, Path::new("t.yaml"))?;
    let root = tempfile::tempdir()?;
    let scratch_root = root.path().join("scratch");
    std::fs::create_dir_all(&scratch_root)?;
    let spec = scenario.dsh.gemini_home.clone().unwrap_or_default();
    let home = make_gemini_home(root.path(), &spec)?;
    let watch = ConversationWatch::prepare(&scenario, &home, &scratch_root)?;
    Ok(Setup {
        _root: root,
        home,
        scratch_root,
        watch,
    })
}

/// What a correct sweep does: removes each dead owner's files, folder and ledger.
fn sweep_dead(setup: &Setup) -> TestResult {
    for dead in setup
        .watch
        .owners
        .iter()
        .filter(|o| o.owner == LedgerOwner::Dead)
    {
        for path in dead
            .sessions
            .iter()
            .flat_map(|id| session_paths(&setup.home, id))
        {
            if path.is_dir() {
                std::fs::remove_dir_all(&path)?;
            } else {
                std::fs::remove_file(&path)?;
            }
        }
        std::fs::remove_dir_all(&dead.scratch)?;
        std::fs::remove_file(&dead.ledger)?;
    }
    Ok(())
}

fn one_failure_containing(failures: &[String], texts: &[&str]) {
    assert_eq!(failures.len(), 1, "{failures:?}");
    for text in texts {
        assert!(failures[0].contains(text), "{text:?} not in {failures:?}");
    }
}

#[test]
fn a_home_left_as_it_was_passes_and_live_owners_keep_their_scratch_names() -> TestResult {
    let setup = setup("")?;
    assert!(setup.watch.judges_credentials());
    sweep_dead(&setup)?;
    assert_eq!(setup.watch.judge(), Vec::<String>::new());
    let kept = setup.watch.kept_in_scratch_root();
    assert_eq!(kept.len(), 2);
    assert!(kept.iter().all(|name| name.starts_with("antigravity-acp-")));
    assert!(kept.iter().any(|name| name.ends_with(".sessions")));
    let mut left: Vec<String> = std::fs::read_dir(&setup.scratch_root)?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let mut kept = kept;
    kept.sort();
    assert_eq!(left, kept);
    Ok(())
}

#[test]
fn a_session_file_left_after_disposal_is_a_b08_leftover_named_by_path() -> TestResult {
    let setup = setup("")?;
    sweep_dead(&setup)?;
    let [db, _, _, _, brain] = session_paths(&setup.home, "5e55-0001");
    std::fs::write(&db, "x")?;
    std::fs::create_dir_all(&brain)?;
    one_failure_containing(
        &setup.watch.judge(),
        &[
            "B08",
            "outlived the run",
            "$GEMINI_HOME/antigravity-acp/conversations/5e55-0001.db",
            "$GEMINI_HOME/antigravity-acp/brain/5e55-0001",
        ],
    );
    Ok(())
}

#[test]
fn an_exempt_scenario_may_leave_its_own_sessions_but_nothing_else() -> TestResult {
    let setup = setup("leaves_conversations: \"kept on purpose\"\n")?;
    sweep_dead(&setup)?;
    let [db, ..] = session_paths(&setup.home, "5e55-0002");
    std::fs::write(&db, "x")?;
    assert_eq!(setup.watch.judge(), Vec::<String>::new());
    let [other_db, ..] = session_paths(&setup.home, OTHER_CLIENT_SESSION);
    std::fs::remove_file(other_db)?;
    one_failure_containing(
        &setup.watch.judge(),
        &["B08", "were removed", "conversations/"],
    );
    Ok(())
}

#[test]
fn an_unswept_dead_owner_is_named() -> TestResult {
    let setup = setup("")?;
    let failures = setup.watch.judge();
    one_failure_containing(&failures, &["B08", "sweep left a dead DSH's session files"]);
    let dead = &setup.watch.owners[0];
    assert!(failures[0].contains(&dead.sessions[0]), "{failures:?}");
    Ok(())
}

#[test]
fn touching_another_clients_or_a_live_owners_files_fails() -> TestResult {
    let setup = setup("")?;
    sweep_dead(&setup)?;
    let [_, wal, _, _, brain] = session_paths(&setup.home, OTHER_CLIENT_SESSION);
    std::fs::write(&wal, "rewritten")?;
    one_failure_containing(&setup.watch.judge(), &["B08", "were changed", ".db-wal"]);
    std::fs::write(brain.join("more.md"), "added")?;
    assert!(
        setup
            .watch
            .judge()
            .iter()
            .any(|f| f.contains("appeared") && f.contains("more.md"))
    );
    let setup = setup_with_live_removed()?;
    one_failure_containing(&setup.watch.judge(), &["B08", "were removed", ".sessions"]);
    Ok(())
}

fn setup_with_live_removed() -> Result<Setup, Box<dyn std::error::Error>> {
    let setup = setup("")?;
    sweep_dead(&setup)?;
    let live = &setup.watch.owners[1];
    std::fs::remove_file(&live.ledger)?;
    Ok(setup)
}

#[test]
fn credentials_are_judged_only_without_a_sign_in() -> TestResult {
    let setup = setup("")?;
    sweep_dead(&setup)?;
    std::fs::remove_file(setup.home.join("antigravity-acp/acp_token.json"))?;
    one_failure_containing(
        &setup.watch.judge(),
        &["B08", "were removed", "acp_token.json"],
    );
    let signing_in = self::setup("fake: { auth: required }\n")?;
    assert!(!signing_in.watch.judges_credentials());
    sweep_dead(&signing_in)?;
    std::fs::write(
        signing_in.home.join("antigravity-acp/settings.json"),
        r#"{"auth":{"type":"oauth-personal"}}"#,
    )?;
    assert_eq!(signing_in.watch.judge(), Vec::<String>::new());
    Ok(())
}

#[test]
fn who_signs_in() -> TestResult {
    let parse = |extra: &str, home: &str| {
        let yaml = format!("name: t\ncovers: []\n{extra}dsh:\n{home}  chat:\n    - user: hi\n");
        crate::scenario::parse(&yaml, Path::new("t.yaml"))
    };
    assert!(!signs_in(&parse("", "")?));
    assert!(signs_in(&parse("fake: { auth: refused }\n", "")?));
    assert!(signs_in(&parse("fake: { auth: from-home }\n", "")?));
    let signed_in_home = "  gemini_home: { auth_type: oauth-personal, token: valid }\n";
    assert!(!signs_in(&parse(
        "fake: { auth: from-home }\n",
        signed_in_home
    )?));
    Ok(())
}
