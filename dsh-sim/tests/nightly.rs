//! The nightly's own test: `ci/nightly-real-server.sh --from <stand-in>` end to end (the
//! scripted model API, `run --agent antigravity`, the report, `dsh-sim findings`), so the
//! script is known to work before it meets the real 1.3.0 build. The stand-in for the
//! build's `.par` is a shell script that makes the fresh `GEMINI_HOME` the runner signed
//! in with an API key into a Gemini CLI home and runs the pinned Gemini CLI
//! (`npm ci --prefix ci/real-agents`) in ACP mode. Without that install the test is
//! skipped, except under CI (`CI` set), which installs it.
//! Unix only, as the script is bash.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The API key the runner signs agents in with (`runner::real_agent`): findings must
/// never show it.
const API_KEY: &str = "dsh-sim-scripted-model-key";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The stand-in for `agy_acp_server.par`: Gemini CLI, with the settings the runner gives
/// it under `--agent gemini-cli`, in the fresh home the runner made for 1.3.0. The
/// build's own arguments (`--uid=` on Linux) are dropped: Gemini CLI refuses them.
fn write_stand_in(folder: &Path, gemini_js: &Path) -> PathBuf {
    let settings = r#"{"security":{"auth":{"selectedType":"gemini-api-key"},"folderTrust":{"enabled":false}},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"general":{"disableAutoUpdate":true,"disableUpdateNag":true},"model":{"name":"gemini-2.5-pro"}}"#;
    let script = format!(
        "#!/bin/sh\nset -eu\nmkdir -p \"$GEMINI_HOME/.gemini\"\nprintf '%s' '{settings}' > \
         \"$GEMINI_HOME/.gemini/settings.json\"\nexport HOME=\"$GEMINI_HOME\"\n\
         export GEMINI_CLI_NO_RELAUNCH=true\nexec node '{}' --acp\n",
        gemini_js.display()
    );
    let stand_in = folder.join("agy_acp_server.par");
    std::fs::write(&stand_in, script).unwrap();
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    stand_in
}

#[test]
fn the_nightly_runs_the_suite_on_a_stand_in_build_and_writes_its_findings() {
    let repo = repo();
    let gemini_js = repo.join("ci/real-agents/node_modules/@google/gemini-cli/bundle/gemini.js");
    if !gemini_js.is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs the pinned Gemini CLI, yet {} is missing",
            gemini_js.display()
        );
        println!(
            "skipped: no Gemini CLI at {} (npm ci --prefix ci/real-agents --ignore-scripts)",
            gemini_js.display()
        );
        return;
    }
    let scratch = tempfile::Builder::new()
        .prefix("dsh-sim-nightly-")
        .tempdir()
        .unwrap();
    let stand_in = write_stand_in(scratch.path(), &gemini_js);
    let out = scratch.path().join("out");
    let output = Command::new("bash")
        .arg(repo.join("ci/nightly-real-server.sh"))
        .arg("--from")
        .arg(&stand_in)
        .arg("scenarios/streaming/any_server_text_turn.yaml")
        .arg("scenarios/tool_calls/invalid_arguments.yaml")
        .env("DSH_SIM", env!("CARGO_BIN_EXE_dsh-sim"))
        .env("NIGHTLY_OUT", &out)
        // The stand-in runs Node from the checkout, outside what a confined server reads.
        .env("NIGHTLY_RUN_ARGS", "--confinement off")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the nightly failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    let report = std::fs::read_to_string(out.join("report.txt")).unwrap();
    let totals = report
        .lines()
        .rev()
        .find(|line| line.contains(" passed"))
        .unwrap_or_else(|| panic!("no totals line in the report:\n{report}"));
    let passed: usize = totals
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of passed scenarios in {totals:?}"));
    assert!(passed >= 1, "{totals}");
    assert!(totals.ends_with(", 0 failed"), "{totals}\n{report}");
    let findings = std::fs::read_to_string(out.join("findings.txt")).unwrap();
    println!("{findings}");
    assert!(
        findings
            .lines()
            .any(|l| l.starts_with("finding: native-tools: ")),
        "{findings}"
    );
    assert!(
        findings
            .lines()
            .any(|l| l.starts_with("finding: api-key-shape: ")),
        "{findings}"
    );
    assert!(!findings.contains(API_KEY), "{findings}");
    assert!(
        stdout.contains("finding: "),
        "the findings are printed:\n{stdout}"
    );
    for scenario in [
        "streaming/any_server_text_turn",
        "tool_calls/invalid_arguments",
    ] {
        let folder = out.join("artifacts/scenarios").join(scenario);
        assert!(folder.join("model-api.jsonl").is_file(), "{scenario}");
    }
}
