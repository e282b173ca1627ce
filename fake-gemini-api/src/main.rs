//! The `fake-gemini-api` binary: load a script, serve on loopback, print the URL, and
//! stop when stdin closes or on SIGTERM / Ctrl-C.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use fake_gemini_api::{ModelApi, ModelScript};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A scripted fake of Google's Gemini API on 127.0.0.1.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The model script (JSON).
    #[arg(long)]
    script: PathBuf,
    /// Where to write the journal (JSON Lines; truncated).
    #[arg(long)]
    journal: PathBuf,
    /// A file to write the port number to.
    #[arg(long)]
    port_file: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let text = std::fs::read_to_string(&args.script)
        .with_context(|| format!("reading {}", args.script.display()))?;
    let script = ModelScript::from_json(&text)
        .with_context(|| format!("loading {}", args.script.display()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let served = runtime.block_on(serve(args, script));
    // A blocking stdin read may still be pending (after SIGTERM); do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    served
}

async fn serve(args: Args, script: ModelScript) -> anyhow::Result<()> {
    let api = ModelApi::start(script, args.journal.clone()).await?;
    let url = api.url();
    if let Some(port_file) = &args.port_file {
        let port = url.rsplit(':').next().unwrap_or_default();
        std::fs::write(port_file, format!("{port}\n"))
            .with_context(|| format!("writing {}", port_file.display()))?;
    }
    let mut stdout = tokio::io::stdout();
    stdout
        .write_all(format!("listening {url}\n").as_bytes())
        .await?;
    stdout.flush().await?;
    tokio::select! {
        () = stdin_closed() => {}
        () = terminated() => {}
    }
    api.shutdown().await;
    Ok(())
}

async fn stdin_closed() {
    let mut stdin = tokio::io::stdin();
    let mut buffer = [0_u8; 1024];
    while let Ok(read) = stdin.read(&mut buffer).await {
        if read == 0 {
            break;
        }
    }
}

#[cfg(unix)]
async fn terminated() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut terminate) => {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(error) => {
            tracing::warn!(%error, "cannot watch SIGTERM; Ctrl-C only");
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

#[cfg(not(unix))]
async fn terminated() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}
