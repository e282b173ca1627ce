//! The leftovers check of `doctor`: the session ledgers that server processes which are
//! gone (a crashed or killed DSH) left in the scratch root, with the sessions they record
//! (their conversations still on disk in the server's home, B08). The adapter's sweep
//! removes them when a provider first launches a server; `doctor --clean` runs that sweep
//! now. Counting and sweeping are `server::conversations`'; a live process's ledger is
//! never counted or touched.

use std::path::PathBuf;

use crate::config::AdapterConfig;
use crate::server::{Leftovers, conversation_leftovers, sweep_conversations};

use super::report::{Check, CheckStatus};

/// The scratch root the adapter uses under `config`.
fn scratch_root(config: &AdapterConfig) -> PathBuf {
    config
        .scratch_root
        .clone()
        .unwrap_or_else(std::env::temp_dir)
}

/// Counts the leftovers, after sweeping them when `clean`.
pub(crate) async fn leftovers_check(config: &AdapterConfig, clean: bool) -> Check {
    let root = scratch_root(config);
    let counted = tokio::task::spawn_blocking(move || {
        // Swept in the pass that counts (see `sweep_conversations`), so what it reports
        // is what it removed.
        let swept = clean.then(|| sweep_conversations(&root));
        let left = conversation_leftovers(&root);
        (swept, left, root)
    })
    .await;
    match counted {
        Ok((swept, left, root)) => judge(swept, left, &root),
        Err(_) => Check::new(
            "leftovers",
            CheckStatus::Warn,
            "not counted",
            "the count of leftover sessions did not complete",
        ),
    }
}

/// The check, from what a `--clean` sweep removed (`None`: no sweep) and what is left.
fn judge(swept: Option<Leftovers>, left: Leftovers, root: &std::path::Path) -> Check {
    let root = root.display();
    if left.ledgers == 0 {
        let detail = match swept {
            Some(swept) if swept.ledgers > 0 => format!(
                "swept {} ledger(s) of ended processes ({} session(s)) from {root}",
                swept.ledgers, swept.sessions
            ),
            _ => format!("no sessions of ended processes are left in {root}"),
        };
        return Check::new("leftovers", CheckStatus::Ok, "none", detail);
    }
    let detail = format!(
        "{} ledger(s) of ended processes in {root} still record {} session(s) whose files \
         are in the server's home; the adapter sweeps them when it next starts a server",
        left.ledgers, left.sessions
    );
    let check = Check::new(
        "leftovers",
        CheckStatus::Warn,
        format!("{} left", left.sessions),
        detail,
    );
    if swept.is_some() {
        check.fix("remove the ledgers named above by hand: the sweep could not")
    } else {
        check.fix("antigravity-acp-dsh doctor --clean (sweeps them now)")
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// A ledger of an ended process (nobody holds its lock) recording `sessions` in `home`.
    fn plant_dead_ledger(
        root: &Path,
        name: &str,
        home: &Path,
        sessions: &[&str],
    ) -> crate::TestResult {
        let mut text = format!("home {}\n", home.display());
        for id in sessions {
            text.push_str(&format!("session {id}\n"));
        }
        std::fs::write(root.join(format!("antigravity-acp-{name}.sessions")), text)?;
        std::fs::create_dir(root.join(format!("antigravity-acp-{name}")))?;
        Ok(())
    }

    /// A scratch root holding two dead owners' ledgers (three sessions) and a live one's,
    /// whose lock the returned handle holds.
    fn planted_root(dir: &Path) -> Result<std::fs::File, test_support::Failure> {
        let home = dir.join("home");
        plant_dead_ledger(dir, "aaaaaa", &home, &["s1", "s2"])?;
        plant_dead_ledger(dir, "bbbbbb", &home, &["s3"])?;
        let live = dir.join("antigravity-acp-cccccc.sessions");
        std::fs::write(&live, format!("home {}\nsession s4\n", home.display()))?;
        let held = std::fs::File::open(&live)?;
        held.lock()?;
        Ok(held)
    }

    fn config_for(root: &Path) -> AdapterConfig {
        AdapterConfig {
            scratch_root: Some(root.to_path_buf()),
            ..AdapterConfig::default()
        }
    }

    /// Dead owners' ledgers are counted with their sessions, a locked one is not; `clean`
    /// sweeps the dead ones and reports what it swept.
    #[tokio::test]
    async fn leftovers_are_counted_and_swept_on_request() -> crate::TestResult {
        // Counted and swept in two roots: a pass over the ledgers locks each dead one while
        // it reads it, and a child that another test of this binary forks in that instant
        // holds a copy of the lock until it execs; a sweep of the same root just after the
        // count could then take a dead ledger for a live one.
        let counted_root = tempfile::tempdir()?;
        let held_counted = planted_root(counted_root.path())?;
        let counted = leftovers_check(&config_for(counted_root.path()), false).await;
        assert_eq!(counted.status, CheckStatus::Warn);
        assert_eq!(counted.brief, "3 left");
        assert!(counted.detail.contains("2 ledger(s)"), "{}", counted.detail);
        assert!(
            counted
                .fix
                .as_deref()
                .is_some_and(|f| f.contains("--clean"))
        );
        assert!(
            counted_root
                .path()
                .join("antigravity-acp-aaaaaa.sessions")
                .exists(),
            "counting removed a ledger"
        );

        let root = tempfile::tempdir()?;
        let held = planted_root(root.path())?;
        let config = config_for(root.path());
        let cleaned = leftovers_check(&config, true).await;
        assert_eq!(cleaned.status, CheckStatus::Ok, "{cleaned:?}");
        assert!(
            cleaned
                .detail
                .contains("swept 2 ledger(s) of ended processes (3 session(s))"),
            "{}",
            cleaned.detail
        );
        assert!(
            root.path().join("antigravity-acp-cccccc.sessions").exists(),
            "a live owner's ledger was swept"
        );
        assert!(!root.path().join("antigravity-acp-aaaaaa.sessions").exists());
        let again = leftovers_check(&config, true).await;
        assert_eq!(again.status, CheckStatus::Ok);
        assert!(again.detail.starts_with("no sessions"), "{}", again.detail);
        drop((held, held_counted));
        Ok(())
    }
}
