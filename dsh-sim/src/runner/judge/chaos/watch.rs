//! What the chaos invariants watch beside the transcript and the journal, for one run:
//! panics on any thread of the process (a panic hook, installed once, chaining the one
//! before it), every tracing event and span field that contains the run's planted secret
//! (a tracing layer, [`SecretWatchLayer`], part of the process's subscriber), and the
//! adapter's live tasks once it was disposed (`antigravity_acp::diagnostics`).
//!
//! Runs are judged one at a time: the watch is process-wide, as the adapter runs
//! in-process.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;

static PANIC_HOOK: Once = Once::new();
static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static PANIC_COUNT: AtomicUsize = AtomicUsize::new(0);

/// Installs the panic hook (once per process): it records every panic, then calls the
/// hook that was installed before it.
pub fn install_panic_hook() {
    PANIC_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let thread = std::thread::current();
            let name = thread.name().unwrap_or("unnamed").to_owned();
            let payload = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            if let Ok(mut panics) = PANICS.lock() {
                panics.push(format!("panic on thread {name} at {at}: {payload}"));
            }
            PANIC_COUNT.fetch_add(1, Ordering::AcqRel);
            previous(info);
        }));
    });
}

static SECRETS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static SECRETS_ACTIVE: AtomicBool = AtomicBool::new(false);
static LOG_HITS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static LAYER_INSTALLED: AtomicBool = AtomicBool::new(false);

/// A tracing layer that records every event and span field containing a watched secret.
/// It costs one atomic load per event while no run is watched.
#[derive(Debug, Default)]
pub struct SecretWatchLayer;

impl SecretWatchLayer {
    /// The layer; call [`mark_installed`] once the subscriber holding it is the global one.
    pub fn new() -> Self {
        Self
    }

    fn check(&self, target: &str, line: &str) {
        let Ok(secrets) = SECRETS.lock() else { return };
        if secrets.iter().any(|secret| line.contains(secret.as_str()))
            && let Ok(mut hits) = LOG_HITS.lock()
        {
            hits.push(format!("{target}: {line}"));
        }
    }
}

/// Says the process's subscriber holds a [`SecretWatchLayer`].
pub fn mark_installed() {
    LAYER_INSTALLED.store(true, Ordering::Release);
}

/// Makes a subscriber of only the watch the global one, unless one is set already (then
/// that one must hold the layer, as `dsh-sim`'s does).
pub fn ensure_log_watch() {
    use tracing_subscriber::layer::SubscriberExt;
    if LAYER_INSTALLED.load(Ordering::Acquire) {
        return;
    }
    let subscriber =
        tracing_subscriber::registry().with(SecretWatchLayer::new().with_filter(watched_targets()));
    if tracing::subscriber::set_global_default(subscriber).is_ok() {
        mark_installed();
    }
}

/// What the watch reads: the adapter's events at every level, its dependencies' at INFO and
/// above. (The ACP SDK logs every frame it sends and receives at DEBUG and TRACE, prompts
/// and remote errors included, so a host must not enable those levels for
/// `agent_client_protocol` where secrets matter.)
pub fn watched_targets() -> tracing_subscriber::filter::Targets {
    tracing_subscriber::filter::Targets::new()
        .with_default(tracing::Level::INFO)
        .with_target("antigravity_acp", tracing::Level::TRACE)
}

/// Collects an event's or a span's fields as one line.
struct LineVisitor<'a>(&'a mut String);

impl Visit for LineVisitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push(' ');
        self.0.push_str(field.name());
        self.0.push('=');
        self.0.push_str(&format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push(' ');
        self.0.push_str(field.name());
        self.0.push('=');
        self.0.push_str(value);
    }
}

impl<S: Subscriber> Layer<S> for SecretWatchLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if !SECRETS_ACTIVE.load(Ordering::Acquire) {
            return;
        }
        let mut line = String::new();
        event.record(&mut LineVisitor(&mut line));
        self.check(event.metadata().target(), &line);
    }

    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _id: &tracing::span::Id,
        _ctx: Context<'_, S>,
    ) {
        if !SECRETS_ACTIVE.load(Ordering::Acquire) {
            return;
        }
        let mut line = String::new();
        attrs.record(&mut LineVisitor(&mut line));
        self.check(attrs.metadata().target(), &line);
    }

    fn on_record(
        &self,
        _id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        _ctx: Context<'_, S>,
    ) {
        if !SECRETS_ACTIVE.load(Ordering::Acquire) {
            return;
        }
        let mut line = String::new();
        values.record(&mut LineVisitor(&mut line));
        self.check("span", &line);
    }
}

/// One run's watch, from [`RunWatch::start`] to [`RunWatch::finish`].
#[derive(Debug)]
pub struct RunWatch {
    panics_before: usize,
    secret: Option<String>,
}

/// What a watch saw.
#[derive(Debug, Default)]
pub struct Watched {
    /// Panics during the run.
    pub panics: Vec<String>,
    /// Log lines that contained the secret.
    pub log_hits: Vec<String>,
    /// Why the watch could not watch, if it could not.
    pub blind: Option<String>,
}

impl RunWatch {
    /// Starts watching for panics and for `secret` in the logs.
    pub fn start(secret: Option<&str>) -> Self {
        install_panic_hook();
        ensure_log_watch();
        if let Some(secret) = secret
            && let Ok(mut secrets) = SECRETS.lock()
        {
            secrets.push(secret.to_owned());
            SECRETS_ACTIVE.store(true, Ordering::Release);
        }
        Self {
            panics_before: PANIC_COUNT.load(Ordering::Acquire),
            secret: secret.map(str::to_owned),
        }
    }

    /// Stops watching; what was seen.
    pub fn finish(self) -> Watched {
        let mut watched = Watched::default();
        if let Some(secret) = &self.secret {
            if let Ok(mut secrets) = SECRETS.lock() {
                secrets.retain(|s| s != secret);
                SECRETS_ACTIVE.store(!secrets.is_empty(), Ordering::Release);
            }
            if let Ok(mut hits) = LOG_HITS.lock() {
                let (mine, others): (Vec<String>, Vec<String>) = hits
                    .drain(..)
                    .partition(|line| line.contains(secret.as_str()));
                *hits = others;
                watched.log_hits = mine;
            }
            if !LAYER_INSTALLED.load(Ordering::Acquire) {
                watched.blind = Some(
                    "the log watch is not installed (another tracing subscriber is global)"
                        .to_owned(),
                );
            }
        }
        let now = PANIC_COUNT.load(Ordering::Acquire);
        if now > self.panics_before
            && let Ok(panics) = PANICS.lock()
        {
            let new = now - self.panics_before;
            watched.panics = panics.iter().rev().take(new).rev().cloned().collect();
        }
        watched
    }
}

/// How long after disposal returned an aborted adapter task may take to be dropped (its
/// future is dropped on a worker's next turn, not inside `abort`).
pub const TASKS_END_BOUND: Duration = Duration::from_millis(100);

/// Under chaos (`watched`), the adapter's live tasks once they all ended or
/// [`TASKS_END_BOUND`] passed; otherwise 0 (not judged).
pub async fn live_tasks_after_disposal(watched: bool) -> usize {
    if watched {
        live_tasks_within(TASKS_END_BOUND).await
    } else {
        0
    }
}

/// The adapter's live tasks once they all ended, or `bound` passed (then how many are
/// left).
pub async fn live_tasks_within(bound: Duration) -> usize {
    let started = Instant::now();
    loop {
        let live = antigravity_acp::diagnostics::live_tasks();
        if live == 0 || started.elapsed() >= bound {
            return live;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
