//! Model discovery: starts a discovery process, opens one session on it (no MCP endpoint)
//! and reads the server's model catalogue from that session's `model` option. The
//! process then joins the pool (C36) with its session unclaimed: the first request
//! without tools may use that still-empty session once instead of opening another (C24),
//! as long as the claim holds (C45).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::acp::{CatalogueModel, SignIn, catalogue};
use crate::config::AdapterConfig;
use crate::error::AdapterError;
use crate::pool::{Holder, PoolKey, PooledProcess, ProcessPool, UnclaimedSession, spawn_server};
use crate::server::ServerLauncher;

/// The server's model catalogue, bounded by the model timeout and
/// ended by disposal.
pub(crate) async fn discover(
    config: &AdapterConfig,
    launcher: &ServerLauncher,
    pool: &Arc<ProcessPool>,
    provider: &CancellationToken,
) -> Result<Vec<CatalogueModel>, AdapterError> {
    let grace = config.shutdown_grace;
    // Whatever started lands here, so an early end (timeout, disposal) still disposes it.
    let mut holder = Holder::default();
    let work = async {
        let line = launcher.resolve().await?;
        pool.sweep_before_first_launch().await;
        PooledProcess::launch(
            PoolKey { line },
            config.scratch_root.as_deref(),
            spawn_server,
            &mut holder,
        )
        .await?;
        let Some(server) = holder.ready.as_mut() else {
            return Err(AdapterError::ConnectionClosed("session/new"));
        };
        let cwd = server.session_dir()?;
        let sign_in = SignIn::new(
            config.sign_in_timeout,
            config.auth_method,
            &server.key.line.env,
        );
        let session = server
            .open_session(
                cwd.path(),
                Vec::new(),
                &config.extra_disabled_tools,
                sign_in,
            )
            .await;
        match session {
            Ok(session) => Ok((session, cwd)),
            Err(error) => {
                cwd.remove();
                Err(error)
            }
        }
    };
    let opened = tokio::select! {
        biased;
        () = provider.cancelled() => Err(AdapterError::Disposed),
        found = tokio::time::timeout(config.timeout, work) => match found {
            Ok(found) => found,
            Err(_elapsed) => Err(AdapterError::Timeout("discovering the model catalogue")),
        },
    };
    match (opened, holder.ready.take()) {
        (Ok((session, cwd)), Some(mut server)) => {
            let models = catalogue(&session);
            server.unclaimed = Some(UnclaimedSession { session, cwd });
            pool.checkin(server);
            Ok(models)
        }
        (Ok((_, cwd)), None) => {
            cwd.remove();
            Err(AdapterError::ConnectionClosed("session/new"))
        }
        (Err(error), Some(server)) => {
            server.dispose(grace).await;
            Err(error)
        }
        (Err(error), None) => {
            holder.dispose(grace).await;
            Err(error)
        }
    }
}
