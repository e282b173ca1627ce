//! The signals that stop the fake, on each system: on Unix `SIGTERM` (which the
//! `process.ignore_sigterm` switch may ignore) and `SIGINT`; on Windows, Ctrl+Break
//! stands for the terminate request and Ctrl+C for the interrupt. The adapter sends
//! neither (it closes stdin, waits, then kills the tree), so these serve a person or a
//! supervisor stopping the fake by hand.

/// What arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    /// `SIGTERM`, or Ctrl+Break on Windows.
    Terminate,
    /// `SIGINT`, or Ctrl+C on Windows.
    Interrupt,
}

/// The fake's watch on its stop signals.
pub struct StopSignals {
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(windows)]
    terminate: tokio::signal::windows::CtrlBreak,
    #[cfg(windows)]
    interrupt: tokio::signal::windows::CtrlC,
}

impl StopSignals {
    /// Starts watching; an error names the signal that cannot be watched.
    pub fn watch() -> Result<Self, String> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Self {
                terminate: signal(SignalKind::terminate())
                    .map_err(|e| format!("cannot watch SIGTERM: {e}"))?,
                interrupt: signal(SignalKind::interrupt())
                    .map_err(|e| format!("cannot watch SIGINT: {e}"))?,
            })
        }
        #[cfg(windows)]
        {
            use tokio::signal::windows::{ctrl_break, ctrl_c};
            Ok(Self {
                terminate: ctrl_break().map_err(|e| format!("cannot watch Ctrl+Break: {e}"))?,
                interrupt: ctrl_c().map_err(|e| format!("cannot watch Ctrl+C: {e}"))?,
            })
        }
    }

    /// The next stop signal.
    pub async fn recv(&mut self) -> StopSignal {
        tokio::select! {
            _ = self.terminate.recv() => StopSignal::Terminate,
            _ = self.interrupt.recv() => StopSignal::Interrupt,
        }
    }
}
