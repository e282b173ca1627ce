//! `antigravity-acp-dsh doctor` and `status`: the checks, in order, and their report.
//! `doctor` looks at everything: the platform and its addon, Node, DSH, the install (every
//! file hashed; `--install` makes or repairs it first, nothing is downloaded otherwise),
//! confinement, the sign-in (skipped by `--quick`, and when no server can start), the
//! bridge's loopback round trip, and the sessions ended processes left (`--clean` sweeps
//! them). `status` is one line: the install (the quick check a launch runs), the sign-in
//! and confinement.

use crate::config::AdapterConfig;
use crate::install::ProgressSink;

use super::bridge_check::bridge_check;
use super::confinement_check::confinement_check;
use super::host::HostFacts;
use super::install_check::{Depth, install_check};
use super::leftovers::leftovers_check;
use super::report::{Check, CheckReport, CheckStatus, CommandOutput};
use super::sign_in_check::sign_in_check;

/// What `doctor` is asked to do beyond looking.
#[derive(Debug, Clone, Default)]
pub struct DoctorOptions {
    /// Skip the sign-in check (no server is started).
    pub quick: bool,
    /// Install (or repair) the pinned server first, as a launch would, but deciding on
    /// every file hashed: what the install check would find broken is repaired.
    pub install: bool,
    /// Sweep the sessions ended processes left, as a provider's first launch does.
    pub clean: bool,
    /// Told the install's events (`--install`): the binary renders them on stderr
    /// (`install_progress::progress_sink`).
    pub progress: Option<ProgressSink>,
}

/// Every check, and the report (exit 0 all ok, 2 warnings only, 1 any failure).
pub async fn doctor(
    config: AdapterConfig,
    host: &HostFacts,
    options: DoctorOptions,
) -> CommandOutput {
    let mut checks = vec![host.platform_check(), host.node_check(), host.dsh_check()];
    let mut config = config;
    if let Some(sink) = options.progress.filter(|_| options.install) {
        super::install_progress::attach(&mut config, sink);
    }
    let install = install_check(&config, Depth::Full, options.install).await;
    let sign_in = if options.quick {
        skipped("--quick: no server was started")
    } else {
        sign_in_unless_uninstalled(&config, &install).await
    };
    checks.push(install);
    checks.push(confinement_check(&config));
    checks.push(sign_in);
    checks.push(bridge_check().await);
    checks.push(leftovers_check(&config, options.clean).await);
    let report = CheckReport::new("doctor", checks);
    let text = report.text();
    CommandOutput::new(&report, text, report.exit_code)
}

/// The install, the sign-in and confinement, on one line (exit codes as `doctor`'s).
pub async fn status(config: AdapterConfig) -> CommandOutput {
    let install = install_check(&config, Depth::Quick, false).await;
    let sign_in = sign_in_unless_uninstalled(&config, &install).await;
    let checks = vec![install, sign_in, confinement_check(&config)];
    let report = CheckReport::new("status", checks);
    let text = report.line();
    CommandOutput::new(&report, text, report.exit_code)
}

/// The sign-in check, unless the install it needs failed (a launch would install, and
/// neither `doctor` without `--install` nor `status` downloads anything).
async fn sign_in_unless_uninstalled(config: &AdapterConfig, install: &Check) -> Check {
    // A server command skips the install check, so only an install can fail it here.
    if install.status == CheckStatus::Fail {
        return skipped("no server was started: the install is not usable");
    }
    sign_in_check(config).await
}

fn skipped(why: &str) -> Check {
    Check::new(
        "signIn",
        CheckStatus::Skip,
        "not checked",
        format!("not checked: {why}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfinementMode;
    use crate::user_commands::host::AddonSource;

    fn host() -> HostFacts {
        HostFacts {
            platform: "linux-x64-glibc".into(),
            package_name: "antigravity-acp-dsh-linux-x64-gnu".into(),
            supported: true,
            addon_path: "/a/x.node".into(),
            addon_source: AddonSource::Local,
            node_version: "22.23.5".into(),
            dsh_version: Some("0.1.0-rc.8".into()),
            cwd: "/host".into(),
        }
    }

    /// A server that exits at once fails the sign-in check with its code, so doctor exits
    /// 1; `--quick` skips it, and what is left decides.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_server_that_exits_at_once_fails_doctor() -> crate::TestResult {
        let scratch = tempfile::tempdir()?;
        let config = AdapterConfig {
            server: crate::config::ServerCommand {
                program: "sh".into(),
                args: vec!["-c".into(), "exit 3".into()],
                env: Vec::new(),
            }
            .into(),
            scratch_root: Some(scratch.path().to_path_buf()),
            confinement: ConfinementMode::Off,
            ..AdapterConfig::default()
        };
        let failed = doctor(config.clone(), &host(), DoctorOptions::default()).await;
        assert_eq!(failed.exit_code, 1, "{}", failed.text);
        let checks = failed.report["checks"].as_array().ok_or("no checks")?;
        let ids: Vec<&str> = checks.iter().filter_map(|c| c["id"].as_str()).collect();
        assert_eq!(
            ids,
            [
                "platform",
                "node",
                "dsh",
                "install",
                "confinement",
                "signIn",
                "bridge",
                "leftovers"
            ]
        );
        let sign_in = &checks[5];
        assert_eq!(sign_in["status"], "fail", "{sign_in}");
        assert!(
            sign_in["detail"]
                .as_str()
                .is_some_and(|d| d.contains("ACP_DISCONNECTED")),
            "{sign_in}"
        );
        assert_eq!(checks[3]["status"], "skip");
        assert_eq!(checks[6]["status"], "ok", "{}", checks[6]);
        let quick = doctor(
            config,
            &host(),
            DoctorOptions {
                quick: true,
                ..DoctorOptions::default()
            },
        )
        .await;
        // Only confinement: off warns.
        assert_eq!(quick.exit_code, 2, "{}", quick.text);
        assert_eq!(quick.report["checks"][5]["status"], "skip");
        assert_eq!(
            std::fs::read_dir(scratch.path())?.count(),
            0,
            "the probe left something in the scratch root"
        );
        Ok(())
    }

    /// Without the install, neither doctor nor status starts (or downloads) anything.
    #[tokio::test]
    async fn a_missing_install_is_a_failure_and_nothing_starts() -> crate::TestResult {
        let cache = tempfile::tempdir()?;
        let mut config = crate::PluginConfig::from_json(
            &serde_json::json!({
                "cacheDir": cache.path(),
                "registry": "https://127.0.0.1:9/never-asked.json",
            })
            .to_string(),
        )?
        .into_adapter_config()?;
        config.confinement = ConfinementMode::Off;
        let status = status(config.clone()).await;
        assert_eq!(status.exit_code, 1, "{}", status.text);
        assert!(
            status
                .text
                .starts_with("install: fail (not installed); sign-in: skip"),
            "{}",
            status.text
        );
        let doctor = doctor(config, &host(), DoctorOptions::default()).await;
        assert_eq!(doctor.report["checks"][3]["status"], "fail");
        assert!(
            doctor.report["checks"][3]["fix"]
                .as_str()
                .is_some_and(|f| f.contains("doctor --install")),
            "{}",
            doctor.text
        );
        assert_eq!(doctor.report["checks"][5]["status"], "skip");
        Ok(())
    }
}
