//! The confinement check of `doctor` and `status`: how the kernel would confine a server
//! under the configured `confinement` mode (`server::confine`'s own decision, the one every
//! launch makes), judged against what B06 promises (files and signals, Landlock ABI 6).

use crate::config::{AdapterConfig, ConfinementMode};
use crate::server::Enforcement;
use crate::server::confine::{REQUIRED_ABI, decide, this_system};

use super::report::{Check, CheckStatus};

/// How the configured mode comes out on this system.
pub(crate) fn confinement_check(config: &AdapterConfig) -> Check {
    let decided = decide(
        config.confinement,
        this_system(),
        config.landlock_abi_ceiling,
    );
    judge(
        config.confinement,
        decided.map_err(|e| e.to_llm_error().message),
    )
}

/// The check of a decision (`Err`: the mode cannot be met, the adapter's message).
fn judge(mode: ConfinementMode, decided: Result<Enforcement, String>) -> Check {
    let mode = mode.as_str();
    let check =
        |status, brief: String, detail: String| Check::new("confinement", status, brief, detail);
    let unconfined = "set confinement to best_effort on a kernel with Landlock (Linux 6.12 or \
                      later for files and signals)";
    match decided {
        Ok(Enforcement::Confined { abi }) if abi >= REQUIRED_ABI => check(
            CheckStatus::Ok,
            format!("Landlock ABI {abi}"),
            format!(
                "servers run confined by Landlock ABI {abi} (files and signals; confinement: {mode})"
            ),
        ),
        Ok(Enforcement::Confined { abi }) => check(
            CheckStatus::Warn,
            format!("Landlock ABI {abi}, files only"),
            format!(
                "servers run confined by Landlock ABI {abi}: files only, signals need ABI \
                 {REQUIRED_ABI} (confinement: {mode})"
            ),
        )
        .fix("run on Linux 6.12 or later for signal confinement"),
        Ok(Enforcement::Seatbelt) => check(
            CheckStatus::Ok,
            "Seatbelt".into(),
            format!("servers run confined by macOS's Seatbelt (confinement: {mode})"),
        ),
        Ok(Enforcement::Off) => check(
            CheckStatus::Warn,
            "off".into(),
            "servers run unconfined: confinement is off, so the server's own tools could reach \
             the user's files"
                .into(),
        )
        .fix(unconfined),
        Ok(Enforcement::Unavailable) => check(
            CheckStatus::Warn,
            "no Landlock".into(),
            format!("servers run unconfined: the kernel offers no Landlock (confinement: {mode})"),
        )
        .fix("run on a kernel with Landlock enabled (Linux 6.12 or later)"),
        Ok(Enforcement::SeatbeltUntried) => check(
            CheckStatus::Warn,
            "unconfined on macOS".into(),
            format!(
                "servers run unconfined: on macOS the Seatbelt profile applies only under \
                 confinement: required (confinement: {mode})"
            ),
        )
        .fix("set confinement to required to run the server under Seatbelt"),
        Ok(Enforcement::NoConfinementHere) => check(
            CheckStatus::Warn,
            "none on this system".into(),
            format!(
                "servers run unconfined: no confinement on this system yet (confinement: {mode})"
            ),
        )
        .fix(
            "the server's own tools stay disabled in every session; for kernel confinement run \
             DSH on Linux (Landlock) or macOS (Seatbelt)",
        ),
        Err(message) => check(CheckStatus::Fail, "cannot be met".into(), message)
            .fix("set confinement to best_effort, or run on a system that can confine the server"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Full confinement passes; less warns with a fix; a mode that cannot be met fails.
    #[test]
    fn each_enforcement_is_judged() {
        let mode = ConfinementMode::BestEffort;
        assert_eq!(
            judge(mode, Ok(Enforcement::Confined { abi: 7 })).status,
            CheckStatus::Ok
        );
        assert_eq!(
            judge(mode, Ok(Enforcement::Confined { abi: 6 })).status,
            CheckStatus::Ok
        );
        for weaker in [
            Enforcement::Confined { abi: 5 },
            Enforcement::Off,
            Enforcement::Unavailable,
            Enforcement::SeatbeltUntried,
            Enforcement::NoConfinementHere,
        ] {
            let check = judge(mode, Ok(weaker));
            assert_eq!(check.status, CheckStatus::Warn, "{weaker:?}");
            assert!(check.fix.is_some(), "{weaker:?}");
        }
        let refused = judge(ConfinementMode::Required, Err("no".into()));
        assert_eq!(refused.status, CheckStatus::Fail);
    }

    /// The check follows the configured mode and the (test) Landlock ceiling.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_configured_mode_decides() {
        let off = AdapterConfig {
            confinement: ConfinementMode::Off,
            ..AdapterConfig::default()
        };
        assert_eq!(confinement_check(&off).brief, "off");
        let required_without_landlock = AdapterConfig {
            confinement: ConfinementMode::Required,
            landlock_abi_ceiling: Some(0),
            ..AdapterConfig::default()
        };
        let check = confinement_check(&required_without_landlock);
        assert_eq!(check.status, CheckStatus::Fail);
        assert!(check.detail.contains("Landlock"), "{}", check.detail);
    }
}
