//! The process pool (C34–C39): healthy idle server processes kept for reuse, keyed by
//! everything used to spawn them, so a process is never reused under other settings.
//! A turn checks one out exclusively (or launches one), and gives it back only after a
//! clean end; the pool keeps at most `max_idle_processes`, each for
//! `idle_process_timeout`, and disposes a process that expired, died while idle, reached
//! `max_sessions_per_process`, or came back after the provider was disposed. The pool
//! owns every disposal it starts and its expiry task, and awaits them on shutdown. Before
//! its first process starts, it sweeps what crashed DSH processes left in the scratch
//! root (B08).

mod process;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{Notify, OnceCell};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub(crate) use process::{Holder, PooledProcess, UnclaimedSession};

use crate::config::AdapterConfig;
use crate::error::AdapterError;
use crate::server::{LaunchLine, ManagedProcess, ServerPipes, sweep_conversations};

/// What a process was spawned with: the whole launch line (program, arguments,
/// environment, which includes the credentials home) and the installed build's digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PoolKey {
    pub(crate) line: LaunchLine,
}

/// How a process reaches its server.
pub(crate) enum ServerLink {
    /// A managed subprocess, spoken to over its stdio.
    Process(Box<(ManagedProcess, ServerPipes)>),
    /// Any pair of byte streams (to the server, from the server): the driver tests
    /// connect the fake's in-process `serve()` over a duplex.
    #[cfg(test)]
    Streams(
        Box<dyn tokio::io::AsyncWrite + Send + Unpin>,
        Box<dyn tokio::io::AsyncRead + Send + Unpin>,
    ),
}

/// Starts the server of `line` as a managed subprocess in `cwd`.
pub(crate) fn spawn_server(line: &LaunchLine, cwd: &Path) -> Result<ServerLink, AdapterError> {
    let (process, pipes) = ManagedProcess::spawn(line, cwd)?;
    Ok(ServerLink::Process(Box::new((process, pipes))))
}

/// A process waiting in the pool.
#[derive(Debug)]
struct Idle {
    process: PooledProcess,
    expires: Instant,
}

/// The pool's settings.
#[derive(Debug, Clone, Copy)]
struct Limits {
    max_idle: usize,
    idle_timeout: Duration,
    max_sessions: usize,
    grace: Duration,
}

/// The provider's pool of idle processes.
#[derive(Debug)]
pub(crate) struct ProcessPool {
    idle: Mutex<Vec<Idle>>,
    limits: Limits,
    changed: Notify,
    /// The provider's token: once cancelled, nothing is kept.
    closing: CancellationToken,
    tasks: TaskTracker,
    expiry_started: AtomicBool,
    /// Where its processes' scratch folders go (`None`: the system temp dir).
    scratch_root: Option<std::path::PathBuf>,
    /// Set once the scratch root was swept of crashed processes' leftovers (B08).
    swept: OnceCell<()>,
}

impl ProcessPool {
    pub(crate) fn new(config: &AdapterConfig, closing: CancellationToken) -> Arc<Self> {
        Arc::new(Self {
            idle: Mutex::new(Vec::new()),
            limits: Limits {
                max_idle: config.max_idle_processes,
                idle_timeout: config.idle_process_timeout,
                max_sessions: config.max_sessions_per_process,
                grace: config.shutdown_grace,
            },
            changed: Notify::new(),
            closing,
            tasks: TaskTracker::new(),
            expiry_started: AtomicBool::new(false),
            scratch_root: config.scratch_root.clone(),
            swept: OnceCell::new(),
        })
    }

    /// Before the provider's first process starts: removes the session files, scratch
    /// folders and ledgers that DSH processes which are gone left in the scratch root
    /// (B08). Never what a live process holds: see `server::conversations`.
    pub(crate) async fn sweep_before_first_launch(&self) {
        self.swept
            .get_or_init(|| async {
                let root = self.scratch_root.clone().unwrap_or_else(std::env::temp_dir);
                let swept = tokio::task::spawn_blocking(move || sweep_conversations(&root));
                if swept.await.is_err() {
                    tracing::warn!("the sweep of crashed processes' sessions failed");
                }
            })
            .await;
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Idle>> {
        match self.idle.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Whether a process may create another session.
    pub(crate) fn has_session_budget(&self, process: &PooledProcess) -> bool {
        process.sessions < self.limits.max_sessions
    }

    /// Whether an idle process kept outside the pool (the no-tool lane's persistent
    /// client) waited longer than `idle_process_timeout`.
    pub(crate) fn has_expired(&self, process: &PooledProcess) -> bool {
        process.idle_since.elapsed() >= self.limits.idle_timeout
    }

    /// Takes a healthy idle process spawned with `key`, exclusively (the most recently
    /// returned first). Dead ones found on the way are disposed.
    pub(crate) fn checkout(&self, key: &PoolKey) -> Option<PooledProcess> {
        let mut idle = self.lock();
        while let Some(index) = idle.iter().rposition(|i| i.process.key == *key) {
            let mut taken = idle.remove(index).process;
            if taken.is_alive() && self.has_session_budget(&taken) {
                self.changed.notify_one();
                return Some(taken);
            }
            tracing::debug!("a pooled process died while idle; disposing it");
            self.dispose_later(taken);
        }
        None
    }

    /// Gives back a process after a clean end: kept when it is healthy, has sessions
    /// left and the pool has room (the oldest idle process makes room otherwise);
    /// disposed when not.
    pub(crate) fn checkin(self: &Arc<Self>, mut process: PooledProcess) {
        let keep = !self.closing.is_cancelled()
            && self.limits.max_idle > 0
            && self.has_session_budget(&process)
            && process.is_alive();
        if !keep {
            self.dispose_later(process);
            return;
        }
        self.start_expiry();
        let mut idle = self.lock();
        while idle.len() >= self.limits.max_idle {
            let oldest = idle.remove(0);
            self.dispose_later(oldest.process);
        }
        idle.push(Idle {
            process,
            expires: Instant::now() + self.limits.idle_timeout,
        });
        drop(idle);
        self.changed.notify_one();
    }

    /// Disposes a process on the pool's tracker (awaited by [`Self::shutdown`]).
    pub(crate) fn dispose_later(&self, process: PooledProcess) {
        let grace = self.limits.grace;
        self.tasks
            .spawn(crate::diagnostics::counted(process.dispose(grace)));
    }

    fn start_expiry(self: &Arc<Self>) {
        if !self.expiry_started.swap(true, Ordering::AcqRel) {
            let pool = Arc::downgrade(self);
            let closing = self.closing.clone();
            self.tasks.spawn(crate::diagnostics::counted(async move {
                loop {
                    let Some(pool) = pool.upgrade() else { return };
                    let next = pool.lock().iter().map(|i| i.expires).min();
                    let wake = async {
                        match next {
                            Some(at) => tokio::time::sleep_until(at).await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        () = closing.cancelled() => {
                            pool.drain();
                            return;
                        }
                        () = wake => pool.expire(),
                        () = pool.changed.notified() => {}
                    }
                }
            }));
        }
    }

    /// Disposes every idle process whose time ran out (C34, C38).
    fn expire(&self) {
        let now = Instant::now();
        let mut idle = self.lock();
        let (expired, kept): (Vec<Idle>, Vec<Idle>) =
            idle.drain(..).partition(|i| i.expires <= now);
        *idle = kept;
        drop(idle);
        for gone in expired {
            tracing::debug!("an idle process expired");
            self.dispose_later(gone.process);
        }
    }

    /// Disposes every idle process.
    fn drain(&self) {
        let all: Vec<Idle> = self.lock().drain(..).collect();
        for gone in all {
            self.dispose_later(gone.process);
        }
    }

    /// Disposes everything and waits for it (the provider's token must be cancelled and
    /// every turn finished first).
    pub(crate) async fn shutdown(&self) {
        self.drain();
        self.tasks.close();
        self.tasks.wait().await;
    }
}
