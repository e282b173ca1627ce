//! Model discovery: starts a discovery process, opens one session on it (no MCP endpoint)
//! and reads the server's model catalogue from that session's `model` option. The
//! process then joins the pool (C36) with its session unclaimed: the first request
//! without tools may use that still-empty session once instead of opening another (C24),
//! as long as the claim holds (C45).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::acp::{catalogue, new_session};
use crate::config::AdapterConfig;
use crate::error::AdapterError;
use crate::pool::{PoolKey, PooledProcess, ProcessPool, UnclaimedSession, spawn_server};
use crate::server::ServerLauncher;

/// The server's model ids (without the adapter prefix), bounded by the model timeout and
/// ended by disposal.
pub(crate) async fn discover(
    config: &AdapterConfig,
    launcher: &ServerLauncher,
    pool: &Arc<ProcessPool>,
    provider: &CancellationToken,
) -> Result<Vec<String>, AdapterError> {
    let work = async {
        let line = launcher.resolve().await?;
        let grace = config.shutdown_grace;
        let mut server = PooledProcess::launch(
            PoolKey { line },
            config.scratch_root.as_deref(),
            grace,
            spawn_server,
        )
        .await?;
        let opened = match server.session_dir() {
            Ok(dir) => {
                server.sessions += 1;
                let session =
                    new_session(server.acp.cx(), server.info, dir.path(), Vec::new()).await;
                session.map(|session| (session, dir))
            }
            Err(error) => Err(error),
        };
        match opened {
            Ok((session, cwd)) => {
                let models = catalogue(&session);
                server.unclaimed = Some(UnclaimedSession { session, cwd });
                pool.checkin(server);
                Ok(models)
            }
            Err(error) => {
                server.dispose(grace).await;
                Err(error)
            }
        }
    };
    tokio::select! {
        biased;
        () = provider.cancelled() => Err(AdapterError::Disposed),
        found = tokio::time::timeout(config.timeout, work) => match found {
            Ok(found) => found,
            Err(_elapsed) => Err(AdapterError::Timeout("discovering the model catalogue")),
        },
    }
}
