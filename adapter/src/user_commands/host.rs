//! What only the Node side knows, handed over by the `antigravity-acp-dsh` binary as JSON
//! ([`HostFacts`]): the platform and the addon it loaded, the Node version, and the DSH
//! version installed where the command runs. Judging them is here: the platform check,
//! Node against the package's `engines` (`^22.19 || >=24`) and DSH's `@deepseek-ai/dsh-llm`
//! against the package's peer range (`^0.1.0-rc.8 || >=0.2.0-0 <0.3.0-0`), read as DSH's app
//! boot reads a plugin's peer ranges (pre-releases included).

use serde::Deserialize;

use super::report::{Check, CheckStatus};

/// The Node versions the package supports (its `engines`).
pub const NODE_RANGE: &str = "^22.19 || >=24";
/// The `@deepseek-ai/dsh-llm` versions the package supports (its peer range).
pub const DSH_RANGE: &str = "^0.1.0-rc.8 || >=0.2.0-0 <0.3.0-0";

/// Where the loaded addon came from (`lib/binding.js`'s order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AddonSource {
    /// `ANTIGRAVITY_ACP_DSH_ADDON` named it.
    Override,
    /// The platform package.
    Package,
    /// A local build beside the package root (a checkout).
    Local,
}

/// The Node side's facts.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostFacts {
    /// `platform-arch[-libc]`, as the loader names it (`linux-x64-glibc`).
    pub platform: String,
    /// The platform package the loader looks for (`antigravity-acp-dsh-linux-x64-gnu`).
    pub package_name: String,
    /// Whether a platform package exists for this platform.
    pub supported: bool,
    /// The file the addon was loaded from.
    pub addon_path: String,
    /// How it was found.
    pub addon_source: AddonSource,
    /// `process.versions.node`.
    pub node_version: String,
    /// The version of `@deepseek-ai/dsh-llm` resolved from the working directory, if any.
    pub dsh_version: Option<String>,
    /// The working directory it was resolved from.
    pub cwd: String,
}

impl HostFacts {
    /// The platform and the addon loaded.
    pub fn platform_check(&self) -> Check {
        let platform = &self.platform;
        let path = &self.addon_path;
        if !self.supported {
            return Check::new(
                "platform",
                CheckStatus::Fail,
                "no build for this platform",
                format!("{platform} has no platform package (loaded {path} by override)"),
            )
            .fix("run DSH on linux x64/arm64 (glibc), macOS or Windows x64");
        }
        let package = &self.package_name;
        match self.addon_source {
            AddonSource::Package => Check::new(
                "platform",
                CheckStatus::Ok,
                package.clone(),
                format!("{platform}: the addon of {package} ({path})"),
            ),
            AddonSource::Local => Check::new(
                "platform",
                CheckStatus::Ok,
                "a local build",
                format!(
                    "{platform}: a local build ({path}), as in a checkout; an install loads {package}"
                ),
            ),
            AddonSource::Override => Check::new(
                "platform",
                CheckStatus::Warn,
                "ANTIGRAVITY_ACP_DSH_ADDON",
                format!("{platform}: ANTIGRAVITY_ACP_DSH_ADDON loads {path} instead of {package}"),
            )
            .fix("unset ANTIGRAVITY_ACP_DSH_ADDON unless you are testing a build"),
        }
    }

    /// Node against the package's engines.
    pub fn node_check(&self) -> Check {
        let version = &self.node_version;
        if node_supported(version) {
            Check::new(
                "node",
                CheckStatus::Ok,
                format!("Node {version}"),
                format!("Node {version} ({NODE_RANGE})"),
            )
        } else {
            Check::new(
                "node",
                CheckStatus::Warn,
                format!("Node {version}"),
                format!(
                    "Node {version} is outside the versions the package supports, {NODE_RANGE}"
                ),
            )
            .fix("run DSH on Node 22.19 or later, or Node 24 or later")
        }
    }

    /// The DSH installed where the command runs.
    pub fn dsh_check(&self) -> Check {
        let cwd = &self.cwd;
        match &self.dsh_version {
            None => Check::new(
                "dsh",
                CheckStatus::Warn,
                "DSH not found",
                format!("no @deepseek-ai/dsh-llm resolves from {cwd}"),
            )
            .fix("run this from the DSH host folder, where DSH and this package are installed"),
            Some(version) if dsh_supported(version) => Check::new(
                "dsh",
                CheckStatus::Ok,
                format!("dsh-llm {version}"),
                format!("@deepseek-ai/dsh-llm {version} ({DSH_RANGE}), from {cwd}"),
            ),
            Some(version) => Check::new(
                "dsh",
                CheckStatus::Warn,
                format!("dsh-llm {version}"),
                format!(
                    "@deepseek-ai/dsh-llm {version} is outside the versions the package supports, {DSH_RANGE}"
                ),
            )
            .fix("install a DSH whose @deepseek-ai/dsh-llm is 0.1.0-rc.8 or later, below 0.3.0"),
        }
    }
}

/// A semantic version, with its pre-release identifiers.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Version {
    core: [u64; 3],
    pre: Vec<String>,
}

impl Version {
    /// `major.minor.patch[-pre][+build]`, a leading `v` allowed; `None` otherwise.
    fn parse(text: &str) -> Option<Self> {
        let text = text.trim().trim_start_matches('v');
        let text = text
            .split_once('+')
            .map_or(text, |(version, _build)| version);
        let (core, pre) = match text.split_once('-') {
            Some((core, pre)) => (core, pre.split('.').map(str::to_owned).collect()),
            None => (text, Vec::new()),
        };
        let mut numbers = core.split('.').map(|n| n.parse::<u64>().ok());
        let parsed = [numbers.next()??, numbers.next()??, numbers.next()??];
        if numbers.next().is_some() {
            return None;
        }
        Some(Self { core: parsed, pre })
    }

    /// Semver precedence: the core, then a release above its pre-releases, then the
    /// pre-release identifiers (numbers below words, numbers by value).
    fn cmp_semver(&self, other: &Self) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        self.core
            .cmp(&other.core)
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    for (a, b) in self.pre.iter().zip(&other.pre) {
                        let order = match (a.parse::<u64>(), b.parse::<u64>()) {
                            (Ok(a), Ok(b)) => a.cmp(&b),
                            (Ok(_), Err(_)) => Ordering::Less,
                            (Err(_), Ok(_)) => Ordering::Greater,
                            (Err(_), Err(_)) => a.cmp(b),
                        };
                        if order != Ordering::Equal {
                            return order;
                        }
                    }
                    self.pre.len().cmp(&other.pre.len())
                }
            })
    }

    fn at_least(&self, other: &str) -> bool {
        Self::parse(other).is_some_and(|other| self.cmp_semver(&other).is_ge())
    }

    fn below(&self, other: &str) -> bool {
        Self::parse(other).is_some_and(|other| self.cmp_semver(&other).is_lt())
    }
}

/// Whether a Node version is in `^22.19 || >=24`.
fn node_supported(version: &str) -> bool {
    Version::parse(version)
        .is_some_and(|v| (v.at_least("22.19.0") && v.below("23.0.0-0")) || v.at_least("24.0.0"))
}

/// Whether a `@deepseek-ai/dsh-llm` version is in `^0.1.0-rc.8 || >=0.2.0-0 <0.3.0-0` as
/// DSH's app boot reads a plugin's peer ranges (`semver.satisfies(v, range,
/// {includePrerelease: true})`): any version from 0.1.0-rc.8 up to, not including, 0.3.0's
/// first pre-release, pre-releases of 0.1.1 or 0.1.7 included (npm's default reading would
/// take a pre-release only of 0.1.0 or 0.2.0, and miss dsh-llm 0.1.1-rc.2).
fn dsh_supported(version: &str) -> bool {
    Version::parse(version).is_some_and(|v| v.at_least("0.1.0-rc.8") && v.below("0.3.0-0"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_versions_are_judged_by_the_engines() {
        for ok in [
            "22.19.0", "22.23.5", "v22.20.1", "24.0.0", "24.22.3", "26.1.0",
        ] {
            assert!(node_supported(ok), "{ok}");
        }
        for old in [
            "20.20.2",
            "22.18.9",
            "23.5.0",
            "24.0.0-nightly",
            "nonsense",
            "22.19",
        ] {
            assert!(!node_supported(old), "{old}");
        }
    }

    #[test]
    fn dsh_versions_are_judged_by_the_peer_range() {
        for ok in [
            "0.1.0-rc.8",
            "0.1.0-rc.10",
            "0.1.0",
            "0.1.1-rc.2",
            "0.1.3-rc.1",
            "0.1.7-rc.2",
            "0.1.7",
            "0.2.0-rc.2",
            "0.2.0-0",
            "0.2.0-beta.1",
            "0.2.5",
        ] {
            assert!(dsh_supported(ok), "{ok}");
        }
        for no in [
            "0.1.0-rc.7",
            "0.1.0-beta.9",
            "0.3.0-0",
            "0.3.0",
            "0.3.0-rc.1",
            "1.0.0",
            "0.0.9",
            "x",
        ] {
            assert!(!dsh_supported(no), "{no}");
        }
    }

    fn facts() -> HostFacts {
        HostFacts {
            platform: "linux-x64-glibc".into(),
            package_name: "antigravity-acp-dsh-linux-x64-gnu".into(),
            supported: true,
            addon_path: "/a/x.node".into(),
            addon_source: AddonSource::Package,
            node_version: "22.23.5".into(),
            dsh_version: Some("0.1.0-rc.8".into()),
            cwd: "/host".into(),
        }
    }

    /// Each host check: ok as it should be, warn (with a fix) otherwise.
    #[test]
    fn host_checks_warn_with_a_fix() {
        let good = facts();
        assert_eq!(good.platform_check().status, CheckStatus::Ok);
        assert_eq!(good.node_check().status, CheckStatus::Ok);
        assert_eq!(good.dsh_check().status, CheckStatus::Ok);
        let local = HostFacts {
            addon_source: AddonSource::Local,
            ..facts()
        };
        assert_eq!(local.platform_check().status, CheckStatus::Ok);
        let bad = HostFacts {
            addon_source: AddonSource::Override,
            node_version: "20.20.2".into(),
            dsh_version: None,
            ..facts()
        };
        for check in [bad.platform_check(), bad.node_check(), bad.dsh_check()] {
            assert_eq!(check.status, CheckStatus::Warn, "{check:?}");
            assert!(check.fix.is_some(), "{check:?}");
        }
        let old_dsh = HostFacts {
            dsh_version: Some("0.3.1".into()),
            ..facts()
        };
        assert_eq!(old_dsh.dsh_check().status, CheckStatus::Warn);
        let unsupported = HostFacts {
            supported: false,
            addon_source: AddonSource::Override,
            ..facts()
        };
        assert_eq!(unsupported.platform_check().status, CheckStatus::Fail);
    }
}
