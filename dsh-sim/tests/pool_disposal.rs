#![allow(clippy::unwrap_used, clippy::expect_used)]
//! C43: disposal awaits the cleanup of every process the provider owns, not only its
//! running turns. One process is left idle in the pool (a tool turn that ended cleanly)
//! and one in the no-tool lane (its persistent client); the moment `dispose` returns,
//! both are dead and their scratch folders gone. Nothing is waited for after it returns:
//! a disposal spawned off on its own would leave them for a moment, and that fails here.

use std::path::Path;
use std::time::Duration;

use antigravity_acp::config::ConfinementMode;
use antigravity_acp::contract::{
    ChunkStream, GenerateOptions, LlmAdapter, Message, StreamChunk, ToolSchema,
};
use antigravity_acp::{AdapterConfig, AntigravityProvider};
use dsh_sim::runner::judge::leak::process_is_live;
use dsh_sim::runner::server_command::fake_command;
use fake_antigravity::journal::JournalEntry;
use futures::StreamExt;

fn hello() -> GenerateOptions {
    GenerateOptions::new(
        "antigravity-acp",
        "server-default",
        vec![Message::user("hello")],
    )
}

fn hello_with_a_tool() -> GenerateOptions {
    let mut request = hello();
    request.tools.get_or_insert_default().push(ToolSchema {
        name: "read_file".into(),
        description: "Reads a file".into(),
        parameters: serde_json::json!({"type": "object"}),
    });
    request
}

/// The stream to its end, within a bound; its finish must be `stop`.
async fn finishes_stop(stream: ChunkStream) {
    let chunks = tokio::time::timeout(Duration::from_secs(20), stream.collect::<Vec<_>>())
        .await
        .expect("the stream did not end within 20 s");
    assert!(
        matches!(chunks.last(), Some(StreamChunk::Finish { reason, .. }) if reason.failure().is_none()),
        "{chunks:?}"
    );
}

/// The pids of every fake process the journal saw start.
fn started_pids(journal: &Path) -> Vec<u32> {
    fake_antigravity::journal::read_dir(journal)
        .unwrap()
        .iter()
        .flatten()
        .filter_map(|entry| match entry {
            JournalEntry::Started { pid, .. } => Some(*pid),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn dispose_returns_with_pooled_and_lane_processes_dead_and_their_scratch_gone() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    let script_text = serde_json::json!({
        "turns": [{"match": {"prompt_contains": "hello"}, "steps": [{"text": "Hi."}]}]
    });
    std::fs::write(&script, script_text.to_string()).unwrap();
    let journal = dir.path().join("journal");
    let turns = dir.path().join("turns");
    std::fs::create_dir_all(&journal).unwrap();
    std::fs::create_dir_all(&turns).unwrap();
    let program = Path::new(env!("CARGO_BIN_EXE_dsh-sim"));
    let config = AdapterConfig {
        server: fake_command(program, &script, &journal).into(),
        scratch_root: Some(turns.clone()),
        shutdown_grace: Duration::from_millis(200),
        // Disposal is what is judged here, not confinement (B06 has its own proofs).
        confinement: ConfinementMode::Off,
        ..AdapterConfig::default()
    };
    let provider = AntigravityProvider::new(config);
    // A request without tools: the no-tool lane keeps its persistent client.
    finishes_stop(provider.stream(hello())).await;
    // A tool turn that ends with text: a process of its own (the lane holds the first),
    // which then goes back to the pool, idle.
    finishes_stop(provider.stream(hello_with_a_tool())).await;
    let pids = started_pids(&journal);
    assert_eq!(
        pids.len(),
        2,
        "one pooled process and one lane client: {pids:?}"
    );
    assert!(pids.iter().all(|pid| process_is_live(*pid)), "{pids:?}");
    // Each process: its scratch folder and, beside it, the ledger of its sessions (B08).
    let mut entries: Vec<String> = std::fs::read_dir(&turns)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(entries.len(), 4, "{entries:?}");
    assert_eq!(
        entries
            .iter()
            .filter(|name| name.ends_with(".sessions"))
            .count(),
        2,
        "{entries:?}"
    );
    provider.dispose().await;
    // Checked at once: dispose must have awaited every process's cleanup.
    for pid in pids {
        assert!(!process_is_live(pid), "process {pid} outlived dispose");
    }
    let left: Vec<_> = std::fs::read_dir(&turns).unwrap().collect();
    assert!(
        left.is_empty(),
        "scratch folders or session ledgers outlived dispose: {left:?}"
    );
}
