//! Judging an install scenario from outside the adapter: archive requests counted by the
//! agent index host, the outcome of the chat's first launch, the cache compared byte for
//! byte with the served archive, no leftovers, nothing planted anywhere in the workspace,
//! every server launched with the harness beside it and the index entry's arguments, and,
//! after an install fault, a next launch that leaves a verified install.

use std::path::Path;

use antigravity_acp::contract::LlmErrorCode;
use antigravity_acp::install::{CURRENT_DIR, InstallEvent, RECEIPT_FILE};

use crate::host::transcript::Transcript;
use crate::runner::judge::wire::ProcessFacts;
use crate::runner::provision::{
    HARNESS_MEMBER, PLANTED_PREFIX, ProvisionRecord, cache_leftovers, member_here,
};
use crate::scenario::{InstallExpectation, InstallOutcomeKind};

/// Every failure of the install expectations and the install's invariants.
pub fn judge_install(
    expect: Option<&InstallExpectation>,
    record: &ProvisionRecord,
    transcript: &Transcript,
    processes: &[ProcessFacts],
) -> Vec<String> {
    let mut failures = record.failures.clone();
    let refusal = transcript
        .last_failure()
        .filter(|f| f.code == LlmErrorCode::AcpInstallFailed.as_str());
    let outcome = outcome_of(&record.events, refusal.is_some());
    if let Some(expect) = expect {
        if let Some(expected) = expect.downloads
            && expected != record.downloads
        {
            failures.push(format!(
                "install: expected {expected} archive download(s), the agent index host answered {}",
                record.downloads
            ));
        }
        if let Some(expected) = expect.registry_fetches
            && expected != record.index_fetches
        {
            failures.push(format!(
                "install: expected {expected} agent index fetch(es), the agent index host answered {}",
                record.index_fetches
            ));
        }
        if let Some(expected) = expect.outcome
            && Some(expected) != outcome
        {
            failures.push(format!(
                "install: expected outcome {expected:?}, observed {outcome:?} (events {:?})",
                record.events
            ));
        }
        if let Some(expected) = expect.repairs {
            let repairs = record
                .events
                .iter()
                .filter(|e| **e == InstallEvent::Installed { repaired: true })
                .count();
            if expected != repairs {
                failures.push(format!(
                    "install: expected {expected} repair(s) during the chat, observed {repairs} (events {:?})",
                    record.events
                ));
            }
        }
        if let Some(reason) = &expect.reason {
            let message = refusal.map(|e| e.message.clone()).unwrap_or_default();
            if !message.contains(&format!("({reason})")) {
                failures.push(format!(
                    "install: expected the refusal reason `{reason}`, the error was {message:?}"
                ));
            }
        }
    }
    failures.extend(planted_files(&record.workspace));
    failures.extend(record.leftovers_after_chat.iter().cloned());
    let refused = outcome == Some(InstallOutcomeKind::Refused);
    if !refused {
        failures.extend(check_launches(record, processes));
    } else if record.started_empty && record.published_after_chat {
        failures.push(
            "install: the install was refused, yet an install was published in the cache"
                .to_owned(),
        );
    }
    match &record.next_attempt {
        Some(Ok(next)) => {
            if let Some(expected) = expect.and_then(|e| e.next_attempt)
                && expected != *next
            {
                failures.push(format!(
                    "install: expected the launch after the chat to be {expected:?}, it was {next:?}"
                ));
            }
            let after_chat = &record.leftovers_after_chat;
            failures.extend(
                cache_leftovers(&record.cache_dir)
                    .into_iter()
                    .filter(|left| !after_chat.contains(left)),
            );
            failures.extend(compare_install(record));
        }
        Some(Err(reason)) => failures.push(format!(
            "install: the launch after the fault did not repair the cache ({reason})"
        )),
        None if expect.is_some_and(|e| e.next_attempt.is_some()) => failures
            .push("install: `next_attempt` is judged only with an `install.fault`".to_owned()),
        None if !refused => failures.extend(compare_install(record)),
        None => {}
    }
    failures
}

/// What the chat's first launch did, from the installer's reports.
fn outcome_of(events: &[InstallEvent], refused: bool) -> Option<InstallOutcomeKind> {
    let mut repairing = false;
    for event in events {
        match event {
            InstallEvent::Reused => return Some(InstallOutcomeKind::Reused),
            InstallEvent::Repairing { .. } => repairing = true,
            InstallEvent::Installed { .. } if repairing => {
                return Some(InstallOutcomeKind::Repaired);
            }
            InstallEvent::Installed { .. } => return Some(InstallOutcomeKind::Installed),
            _ => {}
        }
    }
    refused.then_some(InstallOutcomeKind::Refused)
}

/// Any `planted-*` file or link anywhere in the workspace.
fn planted_files(workspace: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![workspace.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(PLANTED_PREFIX)
            {
                found.push(format!(
                    "a hostile archive entry was written: {}",
                    path.display()
                ));
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(path);
            }
        }
    }
    found
}

/// The published install must hold exactly the archive's members, byte for byte, with
/// their executable bits, and the receipt.
fn compare_install(record: &ProvisionRecord) -> Vec<String> {
    let current = record.cache_dir.join(CURRENT_DIR);
    let mut failures = Vec::new();
    for (name, content, executable) in &record.members {
        let path = current.join(name);
        match std::fs::read(&path) {
            Ok(bytes) if &bytes == content => {}
            Ok(_) => failures.push(format!("the installed `{name}` differs from the archive's")),
            Err(_) => {
                failures.push(format!("the install lacks `{name}`"));
                continue;
            }
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path)
                .map(|m| m.permissions().mode() & 0o777)
                .unwrap_or(0);
            let expected = if *executable { 0o755 } else { 0o644 };
            if mode != expected {
                failures.push(format!(
                    "the installed `{name}` has mode {mode:o}, not {expected:o}"
                ));
            }
        }
        #[cfg(not(unix))]
        let _ = executable;
    }
    if !current.join(RECEIPT_FILE).is_file() {
        failures.push("the install has no receipt".to_owned());
    }
    let expected: std::collections::BTreeSet<String> = record
        .members
        .iter()
        .map(|(name, _, _)| name.clone())
        .chain(std::iter::once(RECEIPT_FILE.to_owned()))
        .collect();
    for extra in files_under(&current) {
        if !expected.contains(&extra) {
            failures.push(format!(
                "the install holds `{extra}`, which the archive does not"
            ));
        }
    }
    failures
}

/// Every file under `dir`, as `/`-separated relative paths.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), String::new())];
    while let Some((path, prefix)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push((entry.path(), format!("{name}/")));
            } else {
                found.push(name);
            }
        }
    }
    found
}

/// Every server ran from the install, with the harness path set and the agent index
/// entry's arguments last.
fn check_launches(record: &ProvisionRecord, processes: &[ProcessFacts]) -> Vec<String> {
    let harness = record
        .cache_dir
        .join(CURRENT_DIR)
        .join(member_here(HARNESS_MEMBER))
        .display()
        .to_string();
    let entry_args: &[&str] = if cfg!(target_os = "linux") {
        &["--uid="]
    } else {
        &[]
    };
    let mut failures = Vec::new();
    for (index, process) in processes.iter().enumerate() {
        let got = process.recorded_env.get("ANTIGRAVITY_HARNESS_PATH");
        if got != Some(&harness) {
            failures.push(format!(
                "server process {} got ANTIGRAVITY_HARNESS_PATH {got:?}, not {harness}",
                index + 1
            ));
        }
        if !process.args.ends_with(
            &entry_args
                .iter()
                .map(|a| (*a).to_owned())
                .collect::<Vec<_>>(),
        ) {
            failures.push(format!(
                "server process {} was not started with the agent index entry's arguments {entry_args:?}: {:?}",
                index + 1,
                process.args
            ));
        }
    }
    failures
}
