//! Provider lifecycle against stand-in servers that never answer (plain `sh` processes):
//! requests the server cannot serve fail explicitly, and timeout, abort, disposal and the
//! active-turn limit all end with the process group gone.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::Path;
use std::time::Duration;

use antigravity_acp::contract::{
    FinishReason, GenerateRequest, LlmAdapter, LlmErrorCode, Message, StreamPart, UserPart,
};
use antigravity_acp::{AdapterConfig, AntigravityProvider, ServerCommand};
use futures::StreamExt;

const BOUND: Duration = Duration::from_secs(20);

/// A "server" that records its pid and then ignores everything, SIGTERM included.
fn silent_server(pidfile: &Path) -> ServerCommand {
    ServerCommand {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            "echo $$ > \"$PIDFILE\"; trap '' TERM; exec sleep 300".into(),
        ],
        env: vec![("PIDFILE".into(), pidfile.display().to_string())],
    }
}

/// A config whose turns make their scratch directories in `<scratch>/turns` (see
/// [`turns_left`]), apart from files the test keeps in `scratch` itself.
fn config(server: ServerCommand, scratch: &Path) -> AdapterConfig {
    let turns = scratch.join("turns");
    std::fs::create_dir_all(&turns).unwrap();
    AdapterConfig {
        server: server.into(),
        scratch_root: Some(turns),
        shutdown_grace: Duration::from_millis(200),
        ..AdapterConfig::default()
    }
}

/// Whether any turn left its scratch directory behind.
fn turns_left(scratch: &Path) -> bool {
    std::fs::read_dir(scratch.join("turns"))
        .unwrap()
        .next()
        .is_some()
}

fn hello() -> GenerateRequest {
    GenerateRequest::chat(
        "antigravity-acp/server-default",
        "",
        vec![Message::User(vec![UserPart::Text("hello".into())])],
    )
}

/// Every item of a stream, with a bound.
async fn collect(
    stream: antigravity_acp::contract::PartStream,
) -> Vec<Result<StreamPart, antigravity_acp::contract::LlmError>> {
    tokio::time::timeout(BOUND, stream.collect::<Vec<_>>())
        .await
        .expect("the stream did not end")
}

fn is_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.contains(") Z "),
        Err(_) => false,
    }
}

fn recorded_pid(pidfile: &Path) -> i32 {
    std::fs::read_to_string(pidfile)
        .expect("the stand-in server never started")
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_cannot_start_is_unavailable() {
    let scratch = tempfile::tempdir().unwrap();
    let server = ServerCommand {
        program: "/nonexistent/agy_acp_server.par".into(),
        args: vec![],
        env: vec![],
    };
    let provider = AntigravityProvider::new(config(server, scratch.path()));
    let items = collect(provider.generate(hello())).await;
    assert_eq!(items.len(), 1);
    assert_eq!(
        items[0].as_ref().unwrap_err().code,
        LlmErrorCode::ServerUnavailable
    );
    provider.dispose().await;
    assert!(!turns_left(scratch.path()), "scratch directory left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_server_times_out_and_its_group_is_killed() {
    let scratch = tempfile::tempdir().unwrap();
    let pidfile = scratch.path().join("pid");
    let mut config = config(silent_server(&pidfile), scratch.path());
    config.timeout = Duration::from_millis(500);
    let provider = AntigravityProvider::new(config);
    let items = collect(provider.generate(hello())).await;
    assert_eq!(
        items.last().unwrap().as_ref().unwrap_err().code,
        LlmErrorCode::Timeout
    );
    provider.dispose().await;
    assert!(
        !is_alive(recorded_pid(&pidfile)),
        "the server outlived its turn"
    );
    assert!(!turns_left(scratch.path()), "scratch directory left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_abort_finishes_cancelled_and_ends_the_server() {
    let scratch = tempfile::tempdir().unwrap();
    let pidfile = scratch.path().join("pid");
    let provider = AntigravityProvider::new(config(silent_server(&pidfile), scratch.path()));
    let request = hello();
    let abort = request.abort.clone();
    let stream = provider.generate(request);
    abort.cancel();
    let items = collect(stream).await;
    assert_eq!(
        items.last().unwrap().as_ref().unwrap(),
        &StreamPart::Finish {
            reason: FinishReason::Cancelled
        }
    );
    provider.dispose().await;
    if pidfile.exists() {
        assert!(
            !is_alive(recorded_pid(&pidfile)),
            "the server outlived the abort"
        );
    }
    assert!(!turns_left(scratch.path()), "scratch directory left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn disposal_ends_running_turns_and_refuses_new_ones() {
    let scratch = tempfile::tempdir().unwrap();
    let pidfile = scratch.path().join("pid");
    let mut config = config(silent_server(&pidfile), scratch.path());
    config.max_active_turns = 1;
    let provider = AntigravityProvider::new(config);
    let first = provider.generate(hello());
    // The active-turn limit fails explicitly instead of queueing.
    let busy = collect(provider.generate(hello())).await;
    assert_eq!(busy[0].as_ref().unwrap_err().code, LlmErrorCode::Busy);
    provider.dispose().await;
    let items = collect(first).await;
    assert_eq!(
        items.last().unwrap().as_ref().unwrap_err().code,
        LlmErrorCode::Disposed
    );
    let after = collect(provider.generate(hello())).await;
    assert_eq!(after[0].as_ref().unwrap_err().code, LlmErrorCode::Disposed);
    if pidfile.exists() {
        assert!(
            !is_alive(recorded_pid(&pidfile)),
            "the server outlived disposal"
        );
    }
    assert!(!turns_left(scratch.path()), "scratch directory left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_the_server_cannot_honour_fail_before_any_process_starts() {
    let scratch = tempfile::tempdir().unwrap();
    let pidfile = scratch.path().join("pid");
    let provider = AntigravityProvider::new(config(silent_server(&pidfile), scratch.path()));

    let mut sampled = hello();
    sampled.sampling.temperature = Some(0.2);
    sampled.sampling.seed = Some(1);
    let error = collect(provider.generate(sampled))
        .await
        .remove(0)
        .unwrap_err();
    assert_eq!(error.code, LlmErrorCode::UnsupportedOption);
    assert!(
        error.message.contains("temperature") && error.message.contains("seed"),
        "{}",
        error.message
    );

    let mut pdf = hello();
    pdf.history.push(Message::User(vec![UserPart::Binary(
        antigravity_acp::contract::BinaryPart {
            media_type: "application/pdf".into(),
            data_base64: "AA==".into(),
        },
    )]));
    let error = collect(provider.generate(pdf)).await.remove(0).unwrap_err();
    assert_eq!(error.code, LlmErrorCode::UnsupportedInput);

    let mut foreign = hello();
    foreign.model = "openai/gpt-9".into();
    let error = collect(provider.generate(foreign))
        .await
        .remove(0)
        .unwrap_err();
    assert_eq!(error.code, LlmErrorCode::ModelUnavailable);

    let mut bad_tool = hello();
    bad_tool.tools.push(antigravity_acp::contract::ToolDefinition {
        name: "fetch".into(),
        description: "Fetches".into(),
        input_schema: serde_json::json!({"type": "object", "properties": {"u": {"$ref": "https://example.com/u.json"}}}),
    });
    let error = collect(provider.generate(bad_tool))
        .await
        .remove(0)
        .unwrap_err();
    assert_eq!(error.code, LlmErrorCode::InvalidToolDefinition);

    provider.dispose().await;
    assert!(
        !pidfile.exists(),
        "a server was started for a request that could not be served"
    );
}

/// A "server" that holds the write end of `fifo` open for as long as it lives.
fn fifo_holding_server(fifo: &Path) -> ServerCommand {
    ServerCommand {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            "exec 3>\"$FIFO\"; trap '' TERM; exec sleep 300".into(),
        ],
        env: vec![("FIFO".into(), fifo.display().to_string())],
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_early_return_ends_the_server_before_disposal() {
    use std::io::Read;
    let scratch = tempfile::tempdir().unwrap();
    let fifo = scratch.path().join("alive");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let provider = AntigravityProvider::new(config(fifo_holding_server(&fifo), scratch.path()));
    let stream = provider.generate(hello());
    // Opening the read end returns once the server holds the write end: it is running.
    let reader = {
        let fifo = fifo.clone();
        tokio::time::timeout(
            BOUND,
            tokio::task::spawn_blocking(move || std::fs::File::open(fifo)),
        )
        .await
        .expect("the server never started")
        .unwrap()
        .unwrap()
    };
    // DSH returns early: it drops the stream without aborting.
    drop(stream);
    // End-of-file means every holder of the write end, the server included, is gone,
    // and this happens before (and without) disposal.
    let eof = tokio::time::timeout(
        BOUND,
        tokio::task::spawn_blocking(move || {
            let mut reader = reader;
            let mut sink = Vec::new();
            reader.read_to_end(&mut sink).map(|_| ())
        }),
    )
    .await;
    assert!(
        matches!(eof, Ok(Ok(Ok(())))),
        "the server outlived DSH's early return"
    );
    provider.dispose().await;
    assert!(!turns_left(scratch.path()), "scratch directory left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_exits_at_once_is_unavailable() {
    let scratch = tempfile::tempdir().unwrap();
    let server = ServerCommand {
        program: "sh".into(),
        args: vec!["-c".into(), "exit 3".into()],
        env: vec![],
    };
    let provider = AntigravityProvider::new(config(server, scratch.path()));
    let items = collect(provider.generate(hello())).await;
    assert_eq!(
        items.last().unwrap().as_ref().unwrap_err().code,
        LlmErrorCode::ServerUnavailable
    );
    provider.dispose().await;
    assert!(!turns_left(scratch.path()), "scratch directory left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn garbage_on_stdout_ends_within_the_bound_and_leaves_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    let pidfile = scratch.path().join("pid");
    let server = ServerCommand {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            "echo $$ > \"$PIDFILE\"; echo 'this is not JSON-RPC'; printf '\\x00\\xff{'; exec sleep 300".into(),
        ],
        env: vec![("PIDFILE".into(), pidfile.display().to_string())],
    };
    let mut config = config(server, scratch.path());
    config.timeout = Duration::from_millis(500);
    let provider = AntigravityProvider::new(config);
    let items = collect(provider.generate(hello())).await;
    let code = items.last().unwrap().as_ref().unwrap_err().code;
    assert!(
        matches!(
            code,
            LlmErrorCode::ServerUnavailable | LlmErrorCode::ServerError | LlmErrorCode::Timeout
        ),
        "{code:?}"
    );
    provider.dispose().await;
    assert!(
        !is_alive(recorded_pid(&pidfile)),
        "the server outlived its turn"
    );
    assert!(!turns_left(scratch.path()), "scratch directory left behind");
}
