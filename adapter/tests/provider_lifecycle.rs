//! Provider lifecycle against stand-in servers that never answer (plain `sh` processes):
//! requests the server cannot serve fail explicitly, and timeout, abort, disposal and the
//! active-turn limit all end with the process group gone.
//!
//! Unix only: the stand-ins are `sh` scripts and the "gone" checks read fifos. On
//! Windows the same lifecycle is shown by the scenario suite, whose servers are the fake.
#![cfg(unix)]
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests make fixtures on disk and start stand-in servers (adapter/clippy.toml)"
)]
#![allow(missing_docs)]

use std::path::Path;
use std::time::Duration;

use antigravity_acp::contract::{
    ChunkStream, ContentBlock, FinishReason, GenerateOptions, LlmAdapter, LlmError, LlmErrorCode,
    Message, Role, StreamChunk,
};
use antigravity_acp::{AdapterConfig, AntigravityProvider, ServerCommand};
use futures::StreamExt;
use test_support::{Failure, TestResult, process_is_live, within};
use tokio_util::sync::CancellationToken;

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
fn config(server: ServerCommand, scratch: &Path) -> Result<AdapterConfig, Failure> {
    let turns = scratch.join("turns");
    std::fs::create_dir_all(&turns)?;
    Ok(AdapterConfig {
        server: server.into(),
        scratch_root: Some(turns),
        shutdown_grace: Duration::from_millis(200),
        // The stand-ins record their pid in `scratch`, outside their own scratch root.
        extra_write_paths: vec![scratch.to_path_buf()],
        ..AdapterConfig::default()
    })
}

/// Whether any turn left its scratch directory behind.
fn turns_left(scratch: &Path) -> Result<bool, Failure> {
    Ok(std::fs::read_dir(scratch.join("turns"))?.next().is_some())
}

fn hello() -> GenerateOptions {
    GenerateOptions::new(
        "antigravity-acp",
        "server-default",
        vec![Message::user("hello")],
    )
}

/// `hello` with one tool offered: a tool turn.
fn hello_with_a_tool() -> GenerateOptions {
    let mut request = hello();
    request
        .tools
        .get_or_insert_default()
        .push(antigravity_acp::contract::ToolSchema {
            name: "read_file".into(),
            description: "Reads a file".into(),
            parameters: serde_json::json!({"type": "object"}),
        });
    request
}

/// Every chunk of a stream, with a bound.
async fn collect(stream: ChunkStream) -> Result<Vec<StreamChunk>, Failure> {
    Ok(within(BOUND, "the stream's end", stream.collect::<Vec<_>>()).await?)
}

/// The failure a finish chunk carries, as an `LlmError` of the adapter's codes.
fn failure_of(chunk: Option<&StreamChunk>) -> Option<LlmError> {
    let Some(StreamChunk::Finish { reason, .. }) = chunk else {
        return None;
    };
    let failure = reason.failure()?;
    Some(LlmError::new(
        LlmErrorCode::parse(&failure.code)?,
        failure.message.clone(),
    ))
}

/// The code of the stream's last chunk, which must be a finish with a failure.
fn last_error(items: &[StreamChunk]) -> Result<LlmErrorCode, Failure> {
    match failure_of(items.last()) {
        Some(error) => Ok(error.code),
        None => Err(format!("the stream did not end with a failure: {items:?}").into()),
    }
}

/// The failure of a stream that holds nothing but its finish.
fn only_error(items: Vec<StreamChunk>) -> Result<LlmError, Failure> {
    match (items.len(), failure_of(items.last())) {
        (1, Some(error)) => Ok(error),
        _ => Err(format!("expected one failed finish, got {items:?}").into()),
    }
}

fn recorded_pid(pidfile: &Path) -> Result<u32, Failure> {
    Ok(std::fs::read_to_string(pidfile)?.trim().parse()?)
}

/// Runs one hello turn on a silent server with a short model timeout and disposes the
/// provider; yields what the stream held and the server's pid.
async fn timed_out_turn(scratch: &Path) -> Result<(Vec<StreamChunk>, u32), Failure> {
    let pidfile = scratch.join("pid");
    let mut config = config(silent_server(&pidfile), scratch)?;
    config.timeout = Duration::from_millis(500);
    let provider = AntigravityProvider::new(config);
    let items = collect(provider.stream(hello())).await?;
    provider.dispose().await;
    Ok((items, recorded_pid(&pidfile)?))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_cannot_start_is_unavailable() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let server = ServerCommand {
        program: "/nonexistent/agy_acp_server.par".into(),
        args: vec![],
        env: vec![],
    };
    let provider = AntigravityProvider::new(config(server, scratch.path())?);
    let items = collect(provider.stream(hello())).await?;
    assert_eq!(only_error(items)?.code, LlmErrorCode::AcpBinaryMissing);
    provider.dispose().await;
    assert!(
        !turns_left(scratch.path())?,
        "scratch directory left behind"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_server_times_out() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let (items, _) = timed_out_turn(scratch.path()).await?;
    assert_eq!(last_error(&items)?, LlmErrorCode::AcpTimeout);
    assert!(
        !turns_left(scratch.path())?,
        "scratch directory left behind"
    );
    Ok(())
}

/// The stand-in ignores SIGTERM: only killing the group ends it.
#[tokio::test(flavor = "multi_thread")]
async fn a_timed_out_server_group_is_killed() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let (_, pid) = timed_out_turn(scratch.path()).await?;
    assert!(!process_is_live(pid), "the server outlived its turn");
    Ok(())
}

/// A "server" that ignores SIGTERM and starts a grandchild in its group (as the real
/// server starts its harness); both hold the write end of `fifo` for as long as they live.
/// The grandchild holds it as fd 2 and the server's stderr pipe as fd 9: an exiting
/// process closes its files in fd order, so once the adapter has seen stderr close, the
/// fifo is closed too (what [`server_is_gone_now`] relies on).
fn server_with_a_grandchild(fifo: &Path) -> ServerCommand {
    ServerCommand {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            "exec 3>\"$FIFO\"; trap '' TERM; (exec 9>&2 2>&3 3>&-; exec sleep 300) & exec sleep 300"
                .into(),
        ],
        env: vec![("FIFO".into(), fifo.display().to_string())],
    }
}

/// Makes the fifo a [`server_with_a_grandchild`] holds.
fn make_fifo(scratch: &Path) -> Result<std::path::PathBuf, Failure> {
    let fifo = scratch.join("alive");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status()?;
    assert!(made.success(), "mkfifo failed");
    Ok(fifo)
}

/// Waits (bounded) until the server holds the fifo's write end: it is running. The
/// returned read end reaches end-of-file once the server and its grandchild are gone.
async fn server_is_up(fifo: &Path) -> Result<std::fs::File, Failure> {
    let fifo = fifo.to_owned();
    let open = tokio::task::spawn_blocking(move || std::fs::File::open(fifo));
    Ok(within(BOUND, "the server's start", open).await???)
}

/// Waits (bounded) until every holder of the fifo, the server and its grandchild, is gone.
/// The read is asynchronous, so a holder that never dies fails the test at the bound
/// instead of keeping a blocked thread (and the test) alive.
async fn server_is_gone(reader: std::fs::File, what: &str) -> TestResult {
    use tokio::io::AsyncReadExt;
    let mut reader = tokio::net::unix::pipe::Receiver::from_file(reader)?;
    let mut sink = Vec::new();
    within(BOUND, what, reader.read_to_end(&mut sink)).await??;
    Ok(())
}

/// Whether every holder of `fifo`, the server and its grandchild, is gone already,
/// without waiting: a read that does not block (on a read end of its own, opened
/// non-blocking) sees end-of-file only then, and `EAGAIN` while a writer lives.
fn server_is_gone_now(fifo: &Path) -> Result<bool, Failure> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo)?;
    let mut buffer = [0u8; 16];
    match reader.read(&mut buffer) {
        Ok(0) => Ok(true),
        Ok(_) => Err("the stand-in wrote into its fifo".into()),
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => Ok(false),
        Err(error) => Err(error.into()),
    }
}

/// What a stream holds already, to its end, without waiting: `None` if it is still open
/// (its producer, the turn, has not ended).
fn ready_to_the_end(stream: &mut ChunkStream) -> Option<Vec<StreamChunk>> {
    use futures::FutureExt;
    let mut items = Vec::new();
    loop {
        match stream.next().now_or_never()? {
            Some(item) => items.push(item),
            None => return Some(items),
        }
    }
}

/// A hello turn on a [`server_with_a_grandchild`], once its server is up.
struct StartedTurn {
    provider: AntigravityProvider,
    /// The request's abort signal.
    abort: CancellationToken,
    stream: ChunkStream,
    /// The fifo's read end, for [`server_is_gone`].
    alive: std::fs::File,
}

/// Starts a hello turn on a [`server_with_a_grandchild`] and waits (bounded) until its
/// server is up.
async fn started_turn(scratch: &Path) -> Result<StartedTurn, Failure> {
    started_turn_for(scratch, hello()).await
}

/// As [`started_turn`], for `request`.
async fn started_turn_for(
    scratch: &Path,
    request: GenerateOptions,
) -> Result<StartedTurn, Failure> {
    let fifo = make_fifo(scratch)?;
    let provider = AntigravityProvider::new(config(server_with_a_grandchild(&fifo), scratch)?);
    let abort = request.signal.clone();
    let stream = provider.stream(request);
    let alive = server_is_up(&fifo).await?;
    Ok(StartedTurn {
        provider,
        abort,
        stream,
        alive,
    })
}

/// Aborts a hello turn once its server (with a grandchild) is up; yields what the stream
/// held, after checking that the abort alone, before disposal, ended the server and its
/// grandchild.
async fn aborted_turn(scratch: &Path) -> Result<Vec<StreamChunk>, Failure> {
    let StartedTurn {
        provider,
        abort,
        stream,
        alive,
    } = started_turn(scratch).await?;
    abort.cancel();
    let items = collect(stream).await?;
    server_is_gone(
        alive,
        "the server's and its grandchild's end after the abort",
    )
    .await?;
    provider.dispose().await;
    Ok(items)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_abort_finishes_cancelled() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let items = aborted_turn(scratch.path()).await?;
    assert!(
        matches!(
            items.last(),
            Some(StreamChunk::Finish {
                reason: FinishReason::Aborted { failure },
                ..
            }) if failure.code == "ABORTED"
        ),
        "{items:?}"
    );
    assert!(
        !turns_left(scratch.path())?,
        "scratch directory left behind"
    );
    Ok(())
}

/// The abort alone (no disposal yet) ends the started server and its grandchild (C38,
/// C49): checked unconditionally, once the server was seen running.
#[tokio::test(flavor = "multi_thread")]
async fn an_abort_ends_the_server() -> TestResult {
    let scratch = tempfile::tempdir()?;
    aborted_turn(scratch.path()).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn turns_beyond_the_active_limit_fail_busy() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let pidfile = scratch.path().join("pid");
    let mut config = config(silent_server(&pidfile), scratch.path())?;
    config.max_active_turns = 1;
    let provider = AntigravityProvider::new(config);
    let _first = provider.stream(hello_with_a_tool());
    // The active-turn limit fails explicitly instead of queueing.
    let busy = collect(provider.stream(hello_with_a_tool())).await?;
    assert_eq!(only_error(busy)?.code, LlmErrorCode::AcpSessionBusy);
    provider.dispose().await;
    Ok(())
}

/// Requests without tools take no active-turn slot: with every slot held by a tool turn
/// they wait their turn in the serialized lane instead of failing `busy` (C42).
#[tokio::test(flavor = "multi_thread")]
async fn requests_without_tools_never_fail_busy() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let pidfile = scratch.path().join("pid");
    let mut config = config(silent_server(&pidfile), scratch.path())?;
    config.max_active_turns = 1;
    config.timeout = Duration::from_millis(500);
    let provider = AntigravityProvider::new(config);
    let _tool_turn = provider.stream(hello_with_a_tool());
    let first = provider.stream(hello());
    let second = provider.stream(hello());
    for items in [collect(first).await?, collect(second).await?] {
        assert_eq!(last_error(&items)?, LlmErrorCode::AcpTimeout, "{items:?}");
    }
    provider.dispose().await;
    Ok(())
}

/// Requests without tools run one at a time (C42): while the first holds the lane, the
/// second has not even started a process; disposal then ends the lane's persistent
/// client too (C43). Each server appends its pid, so the file counts the processes.
#[tokio::test(flavor = "multi_thread")]
async fn requests_without_tools_run_one_at_a_time_and_disposal_ends_their_client() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let pidfile = scratch.path().join("pids");
    let server = ServerCommand {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            "echo $$ >> \"$PIDFILE\"; trap '' TERM; exec sleep 300".into(),
        ],
        env: vec![("PIDFILE".into(), pidfile.display().to_string())],
    };
    let mut config = config(server, scratch.path())?;
    config.timeout = Duration::from_millis(500);
    let provider = AntigravityProvider::new(config);
    let mut first = provider.stream(hello());
    let second = provider.stream(hello());
    // The finish is sent before the first turn disposes its process and hands the lane
    // on (the process ignores SIGTERM, so that takes the shutdown grace): read the pids
    // at the finish, not at the stream's end, which comes only after the hand-over.
    let mut items = Vec::new();
    while let Some(chunk) = within(BOUND, "the first finish", first.next()).await? {
        let finished = matches!(chunk, StreamChunk::Finish { .. });
        items.push(chunk);
        if finished {
            break;
        }
    }
    assert_eq!(last_error(&items)?, LlmErrorCode::AcpTimeout, "{items:?}");
    let started = std::fs::read_to_string(&pidfile)?.lines().count();
    assert_eq!(
        started, 1,
        "the second request started before the first ended"
    );
    drop(first);
    let items = collect(second).await?;
    assert_eq!(last_error(&items)?, LlmErrorCode::AcpTimeout, "{items:?}");
    provider.dispose().await;
    for pid in std::fs::read_to_string(&pidfile)?.lines() {
        let pid: u32 = pid.trim().parse()?;
        assert!(!process_is_live(pid), "server {pid} outlived disposal");
    }
    assert!(
        !turns_left(scratch.path())?,
        "scratch directory left behind"
    );
    Ok(())
}

/// Disposal ends a running turn once its server (with a grandchild) is up: the stream
/// fails `disposed`, and the server and its grandchild are gone (C38, C49), checked
/// unconditionally and at once when `dispose` returns (C43: it awaited the cleanup).
#[tokio::test(flavor = "multi_thread")]
async fn disposal_ends_running_turns() -> TestResult {
    let scratch = tempfile::tempdir()?;
    // A tool turn: no lane lock for disposal to wait on, only the turn's own cleanup.
    let mut turn = started_turn_for(scratch.path(), hello_with_a_tool()).await?;
    turn.provider.dispose().await;
    // Disposal awaited the cleanup (C43): nothing below waits.
    let items = ready_to_the_end(&mut turn.stream)
        .ok_or("dispose returned while the turn's stream was still open")?;
    assert_eq!(last_error(&items)?, LlmErrorCode::AcpDisposed);
    assert!(
        server_is_gone_now(&scratch.path().join("alive"))?,
        "dispose returned with the server or its grandchild alive"
    );
    assert!(
        !turns_left(scratch.path())?,
        "dispose returned with the turn's scratch directory left"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_disposed_provider_refuses_new_turns() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let pidfile = scratch.path().join("pid");
    let provider = AntigravityProvider::new(config(silent_server(&pidfile), scratch.path())?);
    provider.dispose().await;
    let after = collect(provider.stream(hello())).await?;
    assert_eq!(only_error(after)?.code, LlmErrorCode::AcpDisposed);
    assert!(!pidfile.exists(), "a server started after disposal");
    Ok(())
}

/// C72: each control DSH may set that the server cannot honour and the adapter cannot
/// enforce (`reasoningEffort`, `temperature`, a non-empty `stop`) alone fails the request
/// with `UNSUPPORTED_OPTION` naming it, before any server process starts; an empty `stop`
/// list asks for nothing and `maxTokens` (a cap the adapter enforces) is no refusal.
#[tokio::test(flavor = "multi_thread")]
async fn each_sampling_control_alone_is_refused_by_name() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let pidfile = scratch.path().join("pid");
    let provider = AntigravityProvider::new(config(silent_server(&pidfile), scratch.path())?);
    type Set = fn(&mut GenerateOptions);
    let controls: [(&str, Set); 3] = [
        ("reasoningEffort", |r| {
            r.reasoning_effort = Some("high".into())
        }),
        ("temperature", |r| r.temperature = Some(0.2)),
        ("stop", |r| r.stop = Some(vec!["END".into()])),
    ];
    for (name, set) in controls {
        let mut request = hello();
        set(&mut request);
        let error = only_error(collect(provider.stream(request)).await?)?;
        assert_eq!(error.code, LlmErrorCode::UnsupportedOption, "{name}");
        assert!(error.message.contains(name), "{name}: {}", error.message);
    }
    assert!(
        !pidfile.exists(),
        "a server was started for a refused request"
    );
    for (name, accepted) in [
        ("an empty stop list", {
            let mut r = hello();
            r.stop = Some(Vec::new());
            r
        }),
        ("maxTokens", {
            let mut r = hello();
            r.max_tokens = Some(64);
            r
        }),
    ] {
        accepted.signal.cancel();
        let items = collect(provider.stream(accepted)).await?;
        assert_ne!(
            last_error(&items).ok(),
            Some(LlmErrorCode::UnsupportedOption),
            "{name} was refused"
        );
    }
    provider.dispose().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_the_server_cannot_honour_fail_before_any_process_starts() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let pidfile = scratch.path().join("pid");
    let provider = AntigravityProvider::new(config(silent_server(&pidfile), scratch.path())?);

    let mut sampled = hello();
    sampled.temperature = Some(0.2);
    sampled.reasoning_effort = Some("low".into());
    let error = only_error(collect(provider.stream(sampled)).await?)?;
    assert_eq!(error.code, LlmErrorCode::UnsupportedOption);
    assert!(
        error.message.contains("temperature") && error.message.contains("reasoningEffort"),
        "{}",
        error.message
    );

    let mut audio = hello();
    audio.messages.push(Message::new(
        Role::User,
        vec![ContentBlock::Other(
            serde_json::json!({"type": "audio", "data": "AA=="}),
        )],
    ));
    let error = only_error(collect(provider.stream(audio)).await?)?;
    assert_eq!(error.code, LlmErrorCode::UnsupportedOption);

    let mut unnamed = hello();
    unnamed.model = String::new();
    let error = only_error(collect(provider.stream(unnamed)).await?)?;
    assert_eq!(error.code, LlmErrorCode::AcpInvalidModel);

    let mut bad_tool = hello();
    bad_tool.tools.get_or_insert_default().push(antigravity_acp::contract::ToolSchema {
        name: "fetch".into(),
        description: "Fetches".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"u": {"$ref": "https://example.com/u.json"}}}),
    });
    let error = only_error(collect(provider.stream(bad_tool)).await?)?;
    assert_eq!(error.code, LlmErrorCode::AcpToolCatalogInvalid);

    provider.dispose().await;
    assert!(
        !pidfile.exists(),
        "a server was started for a request that could not be served"
    );
    Ok(())
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
async fn an_early_return_ends_the_server_before_disposal() -> TestResult {
    use std::io::Read;
    let scratch = tempfile::tempdir()?;
    let fifo = scratch.path().join("alive");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status()?;
    assert!(made.success(), "mkfifo failed");
    let provider = AntigravityProvider::new(config(fifo_holding_server(&fifo), scratch.path())?);
    let stream = provider.stream(hello());
    // Opening the read end returns once the server holds the write end: it is running.
    let reader = {
        let fifo = fifo.clone();
        let open = tokio::task::spawn_blocking(move || std::fs::File::open(fifo));
        within(BOUND, "the server's start", open).await???
    };
    // DSH returns early: it drops the stream without aborting.
    drop(stream);
    // End-of-file means every holder of the write end, the server included, is gone,
    // and this happens before (and without) disposal.
    let eof = tokio::task::spawn_blocking(move || {
        let mut reader = reader;
        let mut sink = Vec::new();
        reader.read_to_end(&mut sink).map(|_| ())
    });
    within(BOUND, "the server's exit after DSH's early return", eof).await???;
    provider.dispose().await;
    assert!(
        !turns_left(scratch.path())?,
        "scratch directory left behind"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_exits_at_once_is_unavailable() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let server = ServerCommand {
        program: "sh".into(),
        args: vec!["-c".into(), "exit 3".into()],
        env: vec![],
    };
    let provider = AntigravityProvider::new(config(server, scratch.path())?);
    let items = collect(provider.stream(hello())).await?;
    assert_eq!(last_error(&items)?, LlmErrorCode::AcpDisconnected);
    provider.dispose().await;
    assert!(
        !turns_left(scratch.path())?,
        "scratch directory left behind"
    );
    Ok(())
}

/// Runs one hello turn on a server that writes garbage, then disposes the provider.
async fn garbage_turn(scratch: &Path) -> Result<(Vec<StreamChunk>, u32), Failure> {
    let pidfile = scratch.join("pid");
    let server = ServerCommand {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            "echo $$ > \"$PIDFILE\"; echo 'this is not JSON-RPC'; printf '\\x00\\xff{'; exec sleep 300".into(),
        ],
        env: vec![("PIDFILE".into(), pidfile.display().to_string())],
    };
    let mut config = config(server, scratch)?;
    config.timeout = Duration::from_millis(500);
    let provider = AntigravityProvider::new(config);
    let items = collect(provider.stream(hello())).await?;
    provider.dispose().await;
    Ok((items, recorded_pid(&pidfile)?))
}

#[tokio::test(flavor = "multi_thread")]
async fn garbage_on_stdout_fails_within_the_bound() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let (items, _) = garbage_turn(scratch.path()).await?;
    let code = last_error(&items)?;
    assert!(
        matches!(
            code,
            LlmErrorCode::AcpDisconnected | LlmErrorCode::AcpRpcError | LlmErrorCode::AcpTimeout
        ),
        "{code:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_writing_garbage_leaves_nothing_behind() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let (_, pid) = garbage_turn(scratch.path()).await?;
    assert!(!process_is_live(pid), "the server outlived its turn");
    assert!(
        !turns_left(scratch.path())?,
        "scratch directory left behind"
    );
    Ok(())
}

/// A provider dropped without `dispose` still ends its running turns: the server and its
/// grandchild are gone, bounded, and the stream ends `disposed`.
#[tokio::test(flavor = "multi_thread")]
async fn a_provider_dropped_without_dispose_ends_its_turns() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let turn = started_turn(scratch.path()).await?;
    drop(turn.provider);
    let (items, alive) = (collect(turn.stream).await?, turn.alive);
    assert_eq!(last_error(&items)?, LlmErrorCode::AcpDisposed);
    server_is_gone(alive, "the server's end after the provider was dropped").await?;
    Ok(())
}
