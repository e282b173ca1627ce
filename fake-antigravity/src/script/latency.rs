//! `latency_ms`: how long the fake waits before it handles a request, per ACP method
//! (default 0 each). The real 1.3.0 server is slow at more than `initialize`: the
//! TypeScript DSH plugin's probe measured `initialize` 8.0–8.6 s, `session/new` 4.4–5.3 s
//! and model selection about 2.8 s (docs/antigravity-1.3.0.md §2, PROBE). The wait runs
//! off the dispatch loop, so other requests and notifications (a `session/cancel`) are
//! still read meanwhile.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Milliseconds the fake waits before handling each method's requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LatencyScript {
    /// `initialize`.
    #[serde(default)]
    pub initialize: u64,
    /// `authenticate`.
    #[serde(default)]
    pub authenticate: u64,
    /// `session/new`.
    #[serde(default)]
    pub session_new: u64,
    /// `session/load`.
    #[serde(default)]
    pub session_load: u64,
    /// `session/resume`.
    #[serde(default)]
    pub session_resume: u64,
    /// `session/set_config_option` (how clients select a model at 1.3.0).
    #[serde(default)]
    pub set_config_option: u64,
    /// `session/set_mode`.
    #[serde(default)]
    pub set_mode: u64,
    /// `session/set_model` (the legacy model selection).
    #[serde(default)]
    pub set_model: u64,
    /// `session/prompt`, before its first update.
    #[serde(default)]
    pub prompt: u64,
}

impl LatencyScript {
    /// The wait before a request of `method` is handled (zero for a method not listed).
    pub fn before(&self, method: &str) -> Duration {
        let ms = match method {
            "initialize" => self.initialize,
            "authenticate" => self.authenticate,
            "session/new" => self.session_new,
            "session/load" => self.session_load,
            "session/resume" => self.session_resume,
            "session/set_config_option" => self.set_config_option,
            "session/set_mode" => self.set_mode,
            "session/set_model" => self.set_model,
            "session/prompt" => self.prompt,
            _ => 0,
        };
        Duration::from_millis(ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_method_has_its_own_wait() {
        let latency = LatencyScript {
            session_new: 450,
            set_config_option: 280,
            prompt: 5,
            ..LatencyScript::default()
        };
        assert_eq!(latency.before("session/new"), Duration::from_millis(450));
        assert_eq!(
            latency.before("session/set_config_option"),
            Duration::from_millis(280)
        );
        assert_eq!(latency.before("session/prompt"), Duration::from_millis(5));
        assert_eq!(latency.before("initialize"), Duration::ZERO);
        assert_eq!(latency.before("session/list"), Duration::ZERO);
    }
}
