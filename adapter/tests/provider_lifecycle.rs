//! Provider lifecycle against stand-in servers that never answer (plain `sh` processes):
//! requests the server cannot serve fail explicitly, and timeout, abort, disposal and the
//! active-turn limit all end with the process group gone.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "tests make fixtures on disk and start stand-in servers (adapter/clippy.toml)"
)]
#![allow(missing_docs)]

use std::path::Path;
use std::time::Duration;

use antigravity_acp::contract::{
    FinishReason, GenerateRequest, LlmAdapter, LlmError, LlmErrorCode, Message, PartStream,
    StreamPart, UserPart,
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
        ..AdapterConfig::default()
    })
}

/// Whether any turn left its scratch directory behind.
fn turns_left(scratch: &Path) -> Result<bool, Failure> {
    Ok(std::fs::read_dir(scratch.join("turns"))?.next().is_some())
}

fn hello() -> GenerateRequest {
    GenerateRequest::chat(
        "antigravity-acp/server-default",
        "",
        vec![Message::User(vec![UserPart::Text("hello".into())])],
    )
}

/// `hello` with one tool offered: a tool turn.
fn hello_with_a_tool() -> GenerateRequest {
    let mut request = hello();
    request.tools.push(antigravity_acp::contract::ToolSchema {
        name: "read_file".into(),
        description: "Reads a file".into(),
        parameters: serde_json::json!({"type": "object"}),
    });
    request
}

/// Every item of a stream, with a bound.
async fn collect(stream: PartStream) -> Result<Vec<Result<StreamPart, LlmError>>, Failure> {
    Ok(within(BOUND, "the stream's end", stream.collect::<Vec<_>>()).await?)
}

/// The code of the stream's last item, which must be an error.
fn last_error(items: &[Result<StreamPart, LlmError>]) -> Result<LlmErrorCode, Failure> {
    match items.last() {
        Some(Err(error)) => Ok(error.code),
        other => Err(format!("the stream did not end with an error: {other:?}").into()),
    }
}

/// The error of a stream that holds nothing but one.
fn only_error(mut items: Vec<Result<StreamPart, LlmError>>) -> Result<LlmError, Failure> {
    match (items.len(), items.pop()) {
        (1, Some(Err(error))) => Ok(error),
        _ => Err(format!("expected one error, got {items:?}").into()),
    }
}

fn recorded_pid(pidfile: &Path) -> Result<u32, Failure> {
    Ok(std::fs::read_to_string(pidfile)?.trim().parse()?)
}

/// Runs one hello turn on a silent server with a short model timeout and disposes the
/// provider; yields what the stream held and the server's pid.
async fn timed_out_turn(
    scratch: &Path,
) -> Result<(Vec<Result<StreamPart, LlmError>>, u32), Failure> {
    let pidfile = scratch.join("pid");
    let mut config = config(silent_server(&pidfile), scratch)?;
    config.timeout = Duration::from_millis(500);
    let provider = AntigravityProvider::new(config);
    let items = collect(provider.generate(hello())).await?;
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
    let items = collect(provider.generate(hello())).await?;
    assert_eq!(only_error(items)?.code, LlmErrorCode::ServerUnavailable);
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
    assert_eq!(last_error(&items)?, LlmErrorCode::Timeout);
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
fn server_with_a_grandchild(fifo: &Path) -> ServerCommand {
    ServerCommand {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            "exec 3>\"$FIFO\"; trap '' TERM; (exec sleep 300) & exec sleep 300".into(),
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

/// A hello turn on a [`server_with_a_grandchild`], once its server is up.
struct StartedTurn {
    provider: AntigravityProvider,
    /// The request's abort signal.
    abort: CancellationToken,
    stream: PartStream,
    /// The fifo's read end, for [`server_is_gone`].
    alive: std::fs::File,
}

/// Starts a hello turn on a [`server_with_a_grandchild`] and waits (bounded) until its
/// server is up.
async fn started_turn(scratch: &Path) -> Result<StartedTurn, Failure> {
    let fifo = make_fifo(scratch)?;
    let provider = AntigravityProvider::new(config(server_with_a_grandchild(&fifo), scratch)?);
    let request = hello();
    let abort = request.abort.clone();
    let stream = provider.generate(request);
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
async fn aborted_turn(scratch: &Path) -> Result<Vec<Result<StreamPart, LlmError>>, Failure> {
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
            Some(Ok(StreamPart::Finish {
                reason: FinishReason::Cancelled
            }))
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
    let _first = provider.generate(hello_with_a_tool());
    // The active-turn limit fails explicitly instead of queueing.
    let busy = collect(provider.generate(hello_with_a_tool())).await?;
    assert_eq!(only_error(busy)?.code, LlmErrorCode::Busy);
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
    let _tool_turn = provider.generate(hello_with_a_tool());
    let first = provider.generate(hello());
    let second = provider.generate(hello());
    for items in [collect(first).await?, collect(second).await?] {
        assert_eq!(last_error(&items)?, LlmErrorCode::Timeout, "{items:?}");
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
    let first = provider.generate(hello());
    let second = provider.generate(hello());
    let items = collect(first).await?;
    assert_eq!(last_error(&items)?, LlmErrorCode::Timeout, "{items:?}");
    // The terminal part is sent before the lane is handed on: one process so far.
    let started = std::fs::read_to_string(&pidfile)?.lines().count();
    assert_eq!(
        started, 1,
        "the second request started before the first ended"
    );
    let items = collect(second).await?;
    assert_eq!(last_error(&items)?, LlmErrorCode::Timeout, "{items:?}");
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
/// unconditionally.
#[tokio::test(flavor = "multi_thread")]
async fn disposal_ends_running_turns() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let turn = started_turn(scratch.path()).await?;
    turn.provider.dispose().await;
    let (items, alive) = (collect(turn.stream).await?, turn.alive);
    assert_eq!(last_error(&items)?, LlmErrorCode::Disposed);
    server_is_gone(alive, "the server's and its grandchild's end at disposal").await?;
    assert!(
        !turns_left(scratch.path())?,
        "scratch directory left behind"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_disposed_provider_refuses_new_turns() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let pidfile = scratch.path().join("pid");
    let provider = AntigravityProvider::new(config(silent_server(&pidfile), scratch.path())?);
    provider.dispose().await;
    let after = collect(provider.generate(hello())).await?;
    assert_eq!(only_error(after)?.code, LlmErrorCode::Disposed);
    assert!(!pidfile.exists(), "a server started after disposal");
    Ok(())
}

/// C72: each of the six sampling controls alone fails the request with
/// `unsupported_option` naming it, before any server process starts.
#[tokio::test(flavor = "multi_thread")]
async fn each_sampling_control_alone_is_refused_by_name() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let pidfile = scratch.path().join("pid");
    let provider = AntigravityProvider::new(config(silent_server(&pidfile), scratch.path())?);
    type Set = fn(&mut antigravity_acp::contract::SamplingOptions);
    let controls: [(&str, Set); 6] = [
        ("temperature", |s| s.temperature = Some(0.2)),
        ("top_p", |s| s.top_p = Some(0.9)),
        ("top_k", |s| s.top_k = Some(40)),
        ("max_output_tokens", |s| s.max_output_tokens = Some(256)),
        ("stop_sequences", |s| {
            s.stop_sequences = Some(vec!["END".into()])
        }),
        ("seed", |s| s.seed = Some(7)),
    ];
    for (name, set) in controls {
        let mut request = hello();
        set(&mut request.sampling);
        let error = only_error(collect(provider.generate(request)).await?)?;
        assert_eq!(error.code, LlmErrorCode::UnsupportedOption, "{name}");
        assert!(error.message.contains(name), "{name}: {}", error.message);
    }
    assert!(
        !pidfile.exists(),
        "a server was started for a refused request"
    );
    provider.dispose().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_the_server_cannot_honour_fail_before_any_process_starts() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let pidfile = scratch.path().join("pid");
    let provider = AntigravityProvider::new(config(silent_server(&pidfile), scratch.path())?);

    let mut sampled = hello();
    sampled.sampling.temperature = Some(0.2);
    sampled.sampling.seed = Some(1);
    let error = only_error(collect(provider.generate(sampled)).await?)?;
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
    let error = only_error(collect(provider.generate(pdf)).await?)?;
    assert_eq!(error.code, LlmErrorCode::UnsupportedInput);

    let mut foreign = hello();
    foreign.model = "openai/gpt-9".into();
    let error = only_error(collect(provider.generate(foreign)).await?)?;
    assert_eq!(error.code, LlmErrorCode::ModelUnavailable);

    let mut bad_tool = hello();
    bad_tool.tools.push(antigravity_acp::contract::ToolSchema {
        name: "fetch".into(),
        description: "Fetches".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"u": {"$ref": "https://example.com/u.json"}}}),
    });
    let error = only_error(collect(provider.generate(bad_tool)).await?)?;
    assert_eq!(error.code, LlmErrorCode::InvalidToolDefinition);

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
    let stream = provider.generate(hello());
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
    let items = collect(provider.generate(hello())).await?;
    assert_eq!(last_error(&items)?, LlmErrorCode::ServerUnavailable);
    provider.dispose().await;
    assert!(
        !turns_left(scratch.path())?,
        "scratch directory left behind"
    );
    Ok(())
}

/// Runs one hello turn on a server that writes garbage, then disposes the provider.
async fn garbage_turn(scratch: &Path) -> Result<(Vec<Result<StreamPart, LlmError>>, u32), Failure> {
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
    let items = collect(provider.generate(hello())).await?;
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
            LlmErrorCode::ServerUnavailable | LlmErrorCode::ServerError | LlmErrorCode::Timeout
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
    assert_eq!(last_error(&items)?, LlmErrorCode::Disposed);
    server_is_gone(alive, "the server's end after the provider was dropped").await?;
    Ok(())
}
