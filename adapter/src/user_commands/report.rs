//! What the user commands report, and how: one [`Check`] (ok, warn, fail, or skip, with a
//! one-line fix) per thing `doctor` and `status` look at, the exit codes every command
//! ends with, and [`CommandOutput`], a report as JSON (`--json`) and as text, with its
//! exit code. Everything the binary prints is rendered here; the JS prints it.

use serde::Serialize;

/// Every check passed (`doctor`, `status`), or the command did what it was asked.
pub const EXIT_OK: i32 = 0;
/// A check failed, or the command could not do what it was asked (the sign-in did not
/// complete, the server does not offer `logout`, the server did not start, ...).
pub const EXIT_FAILED: i32 = 1;
/// `doctor` and `status` only: no check failed, but at least one warned.
pub const EXIT_WARNINGS: i32 = 2;
/// The command line or the config was refused (an unknown flag, a config field the
/// adapter refuses): nothing was checked or started.
pub const EXIT_USAGE: i32 = 64;

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// Not looked at (`--quick`, or what it needs is missing); counts for nothing.
    Skip,
    /// Fine.
    Ok,
    /// Works, but not as it should (the fix says what to change).
    Warn,
    /// Does not work (the fix says how to make it).
    Fail,
}

impl CheckStatus {
    /// The word printed for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Skip => "skip",
            Self::Ok => "ok",
            Self::Warn => "warn",
            Self::Fail => "fail",
        }
    }
}

/// One thing a command looked at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// Which check (`platform`, `node`, `dsh`, `install`, `confinement`, `signIn`, `bridge`,
    /// `leftovers`).
    pub id: &'static str,
    /// How it came out.
    pub status: CheckStatus,
    /// A few words (`status` prints these on its one line).
    pub brief: String,
    /// What was found, in one line.
    pub detail: String,
    /// How to mend it, in one line (a command to run, a setting to change).
    pub fix: Option<String>,
}

impl Check {
    /// A check with no fix.
    pub fn new(
        id: &'static str,
        status: CheckStatus,
        brief: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            id,
            status,
            brief: brief.into(),
            detail: detail.into(),
            fix: None,
        }
    }

    /// The same check with `fix`.
    pub fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }

    /// The name printed for the check.
    fn label(&self) -> &'static str {
        match self.id {
            "signIn" => "sign-in",
            other => other,
        }
    }
}

/// How many checks came out each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Passed.
    pub ok: usize,
    /// Warned.
    pub warn: usize,
    /// Failed.
    pub fail: usize,
    /// Not looked at.
    pub skip: usize,
}

impl Counts {
    /// The counts of `checks`.
    pub fn of(checks: &[Check]) -> Self {
        let mut counts = Self::default();
        for check in checks {
            match check.status {
                CheckStatus::Ok => counts.ok += 1,
                CheckStatus::Warn => counts.warn += 1,
                CheckStatus::Fail => counts.fail += 1,
                CheckStatus::Skip => counts.skip += 1,
            }
        }
        counts
    }

    /// The exit code of checks so counted: any failure 1, else any warning 2, else 0.
    pub fn exit_code(self) -> i32 {
        if self.fail > 0 {
            EXIT_FAILED
        } else if self.warn > 0 {
            EXIT_WARNINGS
        } else {
            EXIT_OK
        }
    }
}

/// A list of checks (`doctor`'s and `status`'s report).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckReport {
    /// The command (`doctor` or `status`).
    pub command: &'static str,
    /// Each check, in the order made.
    pub checks: Vec<Check>,
    /// How many came out each way.
    pub counts: Counts,
    /// The exit code ([`Counts::exit_code`]).
    pub exit_code: i32,
}

impl CheckReport {
    /// The report of `checks`.
    pub fn new(command: &'static str, checks: Vec<Check>) -> Self {
        let counts = Counts::of(&checks);
        Self {
            command,
            checks,
            counts,
            exit_code: counts.exit_code(),
        }
    }

    /// One line per check (its fix on the next, indented), then the counts.
    pub fn text(&self) -> String {
        let width = self
            .checks
            .iter()
            .map(|c| c.label().len())
            .max()
            .unwrap_or(0);
        let mut text = String::new();
        for check in &self.checks {
            text.push_str(&format!(
                "{:<4}  {:<width$}  {}\n",
                check.status.as_str(),
                check.label(),
                check.detail
            ));
            if let Some(fix) = &check.fix {
                text.push_str(&format!("{:<4}  {:<width$}  fix: {fix}\n", "", ""));
            }
        }
        let Counts {
            ok,
            warn,
            fail,
            skip,
        } = self.counts;
        text.push_str(&format!(
            "{}: {ok} ok, {warn} {}, {fail} failed, {skip} skipped (exit {})\n",
            self.command,
            plural(warn, "warning", "warnings"),
            self.exit_code
        ));
        text
    }

    /// `status`'s one line: each check's name, status and brief.
    pub fn line(&self) -> String {
        let parts: Vec<String> = self
            .checks
            .iter()
            .map(|c| format!("{}: {} ({})", c.label(), c.status.as_str(), c.brief))
            .collect();
        format!("{}\n", parts.join("; "))
    }
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// What a command prints and how it exits: the report as JSON (what `--json` prints) and
/// as text, and the exit code.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandOutput {
    /// The process's exit code ([`EXIT_OK`], [`EXIT_FAILED`], [`EXIT_WARNINGS`]).
    pub exit_code: i32,
    /// The report, for people.
    pub text: String,
    /// The report, as JSON.
    pub report: serde_json::Value,
}

impl CommandOutput {
    /// The output of `report`, printed as `text`, exiting with `exit_code`.
    pub fn new(report: &impl Serialize, text: String, exit_code: i32) -> Self {
        Self {
            exit_code,
            text,
            // The reports are plain data: serializing them cannot fail.
            report: serde_json::to_value(report).unwrap_or(serde_json::Value::Null),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(id: &'static str, status: CheckStatus) -> Check {
        Check::new(id, status, "brief", format!("{id} detail"))
    }

    /// Any failure exits 1, warnings alone exit 2, ok and skipped checks 0.
    #[test]
    fn the_exit_code_is_the_worst_status() {
        let code = |statuses: &[CheckStatus]| {
            let checks: Vec<Check> = statuses.iter().map(|s| check("x", *s)).collect();
            CheckReport::new("doctor", checks).exit_code
        };
        use CheckStatus::{Fail, Ok, Skip, Warn};
        assert_eq!(code(&[]), 0);
        assert_eq!(code(&[Ok, Skip]), 0);
        assert_eq!(code(&[Ok, Warn, Skip]), 2);
        assert_eq!(code(&[Warn, Fail, Ok]), 1);
        assert_eq!(code(&[Fail]), 1);
        assert_eq!(
            (EXIT_OK, EXIT_FAILED, EXIT_WARNINGS, EXIT_USAGE),
            (0, 1, 2, 64)
        );
    }

    /// The text has one line per check, the fix under it, and the counts last; the JSON
    /// names every field in camelCase.
    #[test]
    fn a_report_reads_as_text_and_as_json() -> crate::TestResult {
        let report = CheckReport::new(
            "doctor",
            vec![
                check("platform", CheckStatus::Ok),
                check("signIn", CheckStatus::Fail).fix("antigravity-acp-dsh login"),
                check("node", CheckStatus::Warn),
            ],
        );
        let text = report.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "ok    platform  platform detail");
        assert_eq!(lines[1], "fail  sign-in   signIn detail");
        assert_eq!(lines[2], "                fix: antigravity-acp-dsh login");
        assert_eq!(lines[3], "warn  node      node detail");
        assert_eq!(
            lines[4],
            "doctor: 1 ok, 1 warning, 1 failed, 0 skipped (exit 1)"
        );
        assert_eq!(
            report.line(),
            "platform: ok (brief); sign-in: fail (brief); node: warn (brief)\n"
        );
        let json = serde_json::to_value(&report)?;
        assert_eq!(json["exitCode"], 1);
        assert_eq!(json["counts"]["warn"], 1);
        assert_eq!(json["checks"][1]["id"], "signIn");
        assert_eq!(json["checks"][1]["status"], "fail");
        assert_eq!(json["checks"][1]["fix"], "antigravity-acp-dsh login");
        assert_eq!(json["checks"][0]["fix"], serde_json::Value::Null);
        Ok(())
    }
}
