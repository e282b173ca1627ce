//! A real-time watchdog for tests on a paused tokio clock. Virtual time only advances
//! while every task is idle, so a turn loop that spins (a broken adapter) keeps the clock
//! still and the test's own bounds never fire: the test would hang. The watchdog runs on
//! an OS thread, outside the runtime, and ends the test process with a message once its
//! real-time bound passes; dropping it (the test ended) disarms it at once.

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::Duration;

/// Armed while alive; see the module doc.
#[derive(Debug)]
pub struct RealTimeWatchdog {
    _disarm: Sender<()>,
}

/// Arms a watchdog that aborts the test process when the calling test (named after its
/// thread, as libtest names them) still runs after `bound` of real time.
pub fn real_time_watchdog(bound: Duration) -> RealTimeWatchdog {
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    let (disarm, armed) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(RecvTimeoutError::Timeout) = armed.recv_timeout(bound) {
            // Straight to stderr: libtest captures `eprintln!` of this thread too, and the
            // capture is lost when the process aborts.
            let message = format!(
                "{test} still runs after {bound:?} of real time: a task spins on the paused \
                 clock (a broken turn loop); aborting the test process\n"
            );
            let _unwritable = std::io::Write::write_all(&mut std::io::stderr(), message.as_bytes());
            std::process::abort();
        }
    });
    RealTimeWatchdog { _disarm: disarm }
}
