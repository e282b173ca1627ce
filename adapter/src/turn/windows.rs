//! `ContextWindows`: the context window each model reported through `usage_update`
//! (occupancy, never billing: C71), kept per provider so `resolveModel` can answer
//! `context.contextWindow` once a turn on that model has seen one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The last window size reported per model id (as DSH names the model).
#[derive(Debug, Default)]
pub(crate) struct ContextWindows {
    by_model: Mutex<HashMap<String, u64>>,
}

impl ContextWindows {
    /// The window last reported for `model`.
    pub(crate) fn get(&self, model: &str) -> Option<u64> {
        match self.by_model.lock() {
            Ok(map) => map.get(model).copied(),
            Err(poisoned) => poisoned.into_inner().get(model).copied(),
        }
    }

    fn set(&self, model: &str, size: u64) {
        match self.by_model.lock() {
            Ok(mut map) => map.insert(model.to_owned(), size),
            Err(poisoned) => poisoned.into_inner().insert(model.to_owned(), size),
        };
    }
}

/// Where one turn reports the windows its server announces.
#[derive(Debug, Clone, Default)]
pub(crate) struct WindowReport {
    /// The provider's table.
    pub(crate) windows: Arc<ContextWindows>,
    /// The model the turn runs on.
    pub(crate) model: String,
}

impl WindowReport {
    /// Records a reported window; a size of zero says nothing and is ignored.
    pub(crate) fn record(&self, size: u64) {
        if size > 0 {
            self.windows.set(&self.model, size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_reported_window_per_model_is_kept() {
        let report = WindowReport {
            windows: Arc::default(),
            model: "m".into(),
        };
        assert_eq!(report.windows.get("m"), None);
        report.record(0);
        assert_eq!(report.windows.get("m"), None);
        report.record(200_000);
        report.record(1_000_000);
        assert_eq!(report.windows.get("m"), Some(1_000_000));
        assert_eq!(report.windows.get("other"), None);
    }
}
