//! `platforms`: the systems a scenario can hold on, and why it cannot hold on the others
//! (Landlock is Linux's; an exec bit is Unix's). On any other system the runner reports
//! the scenario as not run, with the reason, and never counts it as a pass.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::Deserialize;

use super::validation::Check;

/// A system DSH runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum System {
    /// Linux (any architecture).
    Linux,
    /// macOS.
    Macos,
    /// Windows.
    Windows,
}

impl System {
    /// The system this program runs on, if DSH runs there.
    pub fn current() -> Option<Self> {
        Self::from_os(std::env::consts::OS)
    }

    /// The system of Rust's `std::env::consts::OS` name.
    pub fn from_os(os: &str) -> Option<Self> {
        match os {
            "linux" => Some(Self::Linux),
            "macos" => Some(Self::Macos),
            "windows" => Some(Self::Windows),
            _ => None,
        }
    }

    /// Its name, as scenarios spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Linux => "linux",
            Self::Macos => "macos",
            Self::Windows => "windows",
        }
    }
}

/// Where a scenario runs.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Platforms {
    /// The systems it holds on (at least one).
    #[schemars(length(min = 1))]
    pub only: BTreeSet<System>,
    /// Why it cannot hold on the others.
    #[schemars(length(min = 1))]
    pub why: String,
}

impl Platforms {
    /// Why the scenario is not run on `here` (`None`: a system DSH does not run on),
    /// or `None` when it runs there.
    pub fn not_run_on(&self, here: Option<System>) -> Option<String> {
        if here.is_some_and(|system| self.only.contains(&system)) {
            return None;
        }
        let only: Vec<&str> = self.only.iter().map(|system| system.name()).collect();
        Some(format!(
            "not run on {}: the scenario holds on {} only ({})",
            here.map_or(std::env::consts::OS, System::name),
            only.join(", "),
            self.why
        ))
    }
}

/// Why a scenario with these `platforms` is not run on this system, or `None` when it is.
pub fn not_run_here(platforms: Option<&Platforms>) -> Option<String> {
    platforms.and_then(|platforms| platforms.not_run_on(System::current()))
}

impl Check for Platforms {
    fn check(&self) -> Result<(), String> {
        if self.only.is_empty() {
            return Err("`platforms.only` needs at least one system".to_owned());
        }
        if self.why.trim().is_empty() {
            return Err(
                "`platforms.why` must say why the scenario cannot hold elsewhere".to_owned(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linux_only() -> Platforms {
        Platforms {
            only: BTreeSet::from([System::Linux]),
            why: "Landlock is Linux's".to_owned(),
        }
    }

    #[test]
    fn a_scenario_runs_only_on_its_systems() {
        let platforms = linux_only();
        assert_eq!(platforms.not_run_on(Some(System::Linux)), None);
        let reason = platforms.not_run_on(Some(System::Windows));
        assert_eq!(
            reason.as_deref(),
            Some("not run on windows: the scenario holds on linux only (Landlock is Linux's)")
        );
        assert!(platforms.not_run_on(None).is_some());
    }

    #[test]
    fn the_field_says_where_and_why() {
        assert!(linux_only().check().is_ok());
        let mut empty = linux_only();
        empty.only.clear();
        assert!(empty.check().is_err());
        let mut silent = linux_only();
        silent.why = " ".to_owned();
        assert!(silent.check().is_err());
    }

    #[test]
    fn systems_are_named_as_rust_names_them() {
        assert_eq!(System::from_os("linux"), Some(System::Linux));
        assert_eq!(System::from_os("macos"), Some(System::Macos));
        assert_eq!(System::from_os("windows"), Some(System::Windows));
        assert_eq!(System::from_os("freebsd"), None);
    }
}
