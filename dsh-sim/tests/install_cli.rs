#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `dsh-sim install` by hand, as a user runs it: against an agent index and archive served on
//! loopback, it installs, reuses, verifies, reports damage without touching it, repairs,
//! and refuses a wrong digest or plain HTTP without the opt-in, with exit codes to match.

use std::path::Path;
use std::process::Output;

use dsh_sim::runner::provision::{
    AgentIndexServer, HARNESS_MEMBER, SERVER_MEMBER, agent_index_document, build_archive,
    member_here,
};
use dsh_sim::scenario::{ArchiveKind, RegistryKind, ServeKind};
use sha2::Digest;

fn dsh_sim() -> &'static str {
    env!("CARGO_BIN_EXE_dsh-sim")
}

fn install(args: &[&str]) -> Output {
    std::process::Command::new(dsh_sim())
        .arg("install")
        .args(args)
        .output()
        .unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_reuse_verify_and_repair_by_hand() {
    let work = tempfile::tempdir().unwrap();
    let archive = build_archive(
        ArchiveKind::Good,
        Path::new(dsh_sim()),
        &work.path().join("script.json"),
        &work.path().join("journal"),
        work.path(),
        1 << 20,
    )
    .unwrap();
    let digest = hex::encode(sha2::Sha256::digest(&archive.bytes));
    let platform = antigravity_acp::install::current_platform().unwrap();
    let server = AgentIndexServer::start(archive.bytes.clone(), ServeKind::Ok, |url| {
        agent_index_document(RegistryKind::Entry, platform, url, None)
    })
    .await
    .unwrap();
    let index_url = server.index_url();
    let cache = work.path().join("cache");
    let cache = cache.to_str().unwrap();
    let base = [
        "--registry",
        &index_url,
        "--cache",
        cache,
        "--sha256",
        &digest,
    ];
    let with_opt_in: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--insecure-loopback"])
        .collect();

    let refused = install(&base);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        text(&refused).contains("insecure_url"),
        "{}",
        text(&refused)
    );

    let first = install(&with_opt_in);
    assert!(first.status.success(), "{}", text(&first));
    assert!(text(&first).contains("installed"), "{}", text(&first));
    // This platform's member names (`.exe` on Windows), its paths written with `/`.
    let server_member = member_here(SERVER_MEMBER);
    let harness_member = member_here(HARNESS_MEMBER);
    let shown = text(&first).replace('\\', "/");
    assert!(
        shown.contains(&format!("current/{server_member}")),
        "{shown}"
    );

    let again = install(&with_opt_in);
    assert!(again.status.success(), "{}", text(&again));
    assert!(text(&again).contains("reused"), "{}", text(&again));
    assert_eq!(server.downloads(), 1);

    let verify: Vec<&str> = with_opt_in.iter().copied().chain(["--verify"]).collect();
    let clean = install(&verify);
    assert!(clean.status.success(), "{}", text(&clean));
    assert!(text(&clean).contains("verified"), "{}", text(&clean));

    let harness = Path::new(cache).join("current").join(&harness_member);
    let mut bytes = std::fs::read(&harness).unwrap();
    bytes[3] ^= 1;
    std::fs::write(&harness, &bytes).unwrap();
    let damaged = install(&verify);
    assert_eq!(damaged.status.code(), Some(1), "{}", text(&damaged));
    assert!(
        text(&damaged).contains(&harness_member),
        "{}",
        text(&damaged)
    );
    assert_eq!(
        std::fs::read(&harness).unwrap(),
        bytes,
        "--verify changed the cache"
    );
    assert_eq!(server.downloads(), 1, "--verify downloaded");

    let repaired = install(&with_opt_in);
    assert!(repaired.status.success(), "{}", text(&repaired));
    assert!(text(&repaired).contains("repaired"), "{}", text(&repaired));
    assert_eq!(server.downloads(), 2);
    assert!(install(&verify).status.success());

    let wrong = "0".repeat(64);
    let pinned = install(&[
        "--registry",
        &index_url,
        "--cache",
        work.path().join("other").to_str().unwrap(),
        "--insecure-loopback",
        "--sha256",
        &wrong,
    ]);
    assert_eq!(pinned.status.code(), Some(1), "{}", text(&pinned));
    assert!(
        text(&pinned).contains("digest_mismatch"),
        "{}",
        text(&pinned)
    );
    server.stop().await;
}
