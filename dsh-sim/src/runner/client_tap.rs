//! `dsh-sim tap --journal DIR -- PROGRAM ARGS…`: the client-side journal of a run against
//! any ACP server. The runner launches the server through this relay, which copies the
//! adapter's stdin to the server and the server's stdout back, and journals every frame
//! in the fake's journal format (`Started` with the server's pid, cwd and environment
//! names, `AcpIn` / `AcpOut` with credentials redacted, `Exited`), so the wire
//! expectations that depend only on ACP frames hold for any server. The server's MCP
//! traffic goes to the adapter's bridge directly and is not seen here.
//!
//! The relay stays in the server's process group (the adapter kills the group), passes
//! stderr through untouched (keeping a copy next to the journal, which a failed
//! scenario's artefacts show redacted), and exits with the server's code once its
//! streams end, even while the client still holds its side open (a server that dies at
//! start is then a disconnection to the adapter, as without the relay).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::sync::Arc;

use fake_antigravity::JournalWriter;
use fake_antigravity::journal::JournalEntry;
use fake_antigravity::journal::wire_tap::{TappedReader, TappedWriter};

fn started(pid: u32, program: &OsString, args: &[OsString]) -> JournalEntry {
    let env: BTreeMap<String, String> = fake_antigravity::process::RECORDED_ENV
        .iter()
        .filter_map(|name| {
            std::env::var_os(name).map(|v| ((*name).to_owned(), v.to_string_lossy().into_owned()))
        })
        .collect();
    let mut env_names: Vec<String> = std::env::vars_os()
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    env_names.sort();
    JournalEntry::Started {
        pid,
        args: std::iter::once(program)
            .chain(args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        env,
        env_names,
    }
}

/// Runs the relay until the server exits; its exit code.
pub fn run_tap(journal_dir: &Path, program: OsString, args: Vec<OsString>) -> ExitCode {
    let journal = match JournalWriter::create_in(journal_dir) {
        Ok(journal) => Arc::new(journal),
        Err(error) => {
            eprintln!("dsh-sim tap: {error}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("dsh-sim tap: cannot start a runtime: {error}");
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(relay(&journal, &program, &args));
    // A blocking stdin read may still be pending: do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    code
}

async fn relay(journal: &Arc<JournalWriter>, program: &OsString, args: &[OsString]) -> ExitCode {
    let spawned = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(error) => {
            eprintln!("dsh-sim tap: cannot start the server: {error}");
            return ExitCode::from(127);
        }
    };
    journal.record(&started(child.id().unwrap_or(0), program, args));
    let (Some(mut server_in), Some(server_out), Some(server_err)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return ExitCode::FAILURE;
    };
    let mut from_client = TappedReader::new(tokio::io::stdin(), Some(journal.clone()));
    let mut from_server = server_out;
    let mut to_client = TappedWriter::new(tokio::io::stdout(), Some(journal.clone()));
    let upstream = async {
        // A broken pipe ends the relay the same way end-of-file does.
        let _relayed = tokio::io::copy(&mut from_client, &mut server_in).await;
        // The client closed its side: so does the relay, as the server's stdin.
        drop(server_in);
    };
    let downstream = async {
        if tokio::io::copy(&mut from_server, &mut to_client)
            .await
            .is_ok()
        {
            let _flushed = tokio::io::AsyncWriteExt::flush(&mut to_client).await;
        }
    };
    let stderr_copy = journal.path().with_extension("stderr");
    let errors = pass_stderr_through(server_err, &stderr_copy);
    // Once the server's output ends (it exited, or closed its streams), the relay ends
    // too, whether or not the client closed its side: the relay's own stdout must close,
    // so a server that dies at start is a disconnection to the adapter, not a hang.
    let server_side = async { tokio::join!(downstream, errors) };
    tokio::pin!(upstream, server_side);
    tokio::select! {
        ((), ()) = &mut server_side => {}
        () = &mut upstream => {
            let ((), ()) = server_side.await;
        }
    }
    let status = child.wait().await;
    let reason = match &status {
        Ok(status) => format!("server exited ({status})"),
        Err(error) => format!("server lost: {error}"),
    };
    journal.record(&JournalEntry::Exited { reason });
    match status.ok().and_then(|s| s.code()) {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    }
}

/// Copies the server's stderr to the relay's own, unchanged, and to `copy` (next to the
/// journal, for a failed scenario's artefacts, which redact it: B05), until end-of-file.
/// A copy that cannot be written is given up; the pass-through goes on.
async fn pass_stderr_through(mut from_server: tokio::process::ChildStderr, copy: &Path) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut file = tokio::fs::File::create(copy).await.ok();
    let mut to_client = tokio::io::stderr();
    let mut buffer = vec![0u8; 8192];
    loop {
        let read = match from_server.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        let Some(bytes) = buffer.get(..read) else {
            return;
        };
        // A closed stderr must not end the relay.
        let _passed = to_client.write_all(bytes).await;
        if let Some(open) = file.as_mut()
            && open.write_all(bytes).await.is_err()
        {
            file = None;
        }
    }
}
