#!/usr/bin/env bash
# Nightly: run the scenario suite against the real Antigravity ACP server 1.3.0 (claim B01)
# with nothing but the download: no account, no secret, no person. Leaves a report, the
# artefacts of every scenario, and the findings for docs/antigravity-1.3.0.md.
#
#   ci/nightly-real-server.sh [--from /path/to/agy_acp_server.par] [scenario paths...]
#
# Without --from, the pinned 1.3.0 build is installed (or repaired) and verified with
# `dsh-sim install` in the per-user cache, exactly as the adapter does for DSH; with it,
# the given build is used as it is (its path must hold no whitespace: `--server` is split
# on whitespace). Its `localharness_external`, when next to it, is handed over in
# ANTIGRAVITY_HARNESS_PATH.
#
# The suite runs with `dsh-sim run --agent antigravity`: the model service is the scripted
# model API (fake-gemini-api, on loopback, playing each scenario's `fake.turns`), and each
# scenario gets a fresh GEMINI_HOME signed in with an API key the model API accepts, so the
# server needs no credentials. Scenarios marked `fake_only` are skipped. Every scenario
# keeps its artefacts (`--keep-artifacts`); a failing one leaves `replay.yaml` (the
# scenario with a `fake:` script replaying what the real server sent, ready to commit as a
# bug reproduction against the fake) and `model-api.jsonl` (what the server asked the
# model). `dsh-sim findings` then reads every journal and prints what the real server does
# (how it names MCP tools, its native tools, its permission requests, what it sends around
# a tool result, retries, models, the API key's shape — never its value).
#
# Environment: NIGHTLY_OUT (default target/nightly/<UTC date>): report.txt, findings.txt,
# install.txt, artifacts/. DSH_SIM: a prebuilt dsh-sim (default: a release build).
# NIGHTLY_RUN_ARGS: more `dsh-sim run` options, split on whitespace (the script's own test
# passes `--confinement off`, as its stand-in for the build runs Node from the checkout).
# Exits non-zero when any scenario failed (or the install or the findings did).
set -euo pipefail
cd "$(dirname "$0")/.."
server=""
if [ "${1:-}" = "--from" ]; then
    server="${2:?--from needs the path of agy_acp_server.par}"
    shift 2
fi
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=(scenarios)
out="${NIGHTLY_OUT:-target/nightly/$(date -u +%Y-%m-%dT%H%M%SZ)}"
mkdir -p "$out"
dsh_sim="${DSH_SIM:-}"   # a prebuilt dsh-sim (tests); default: a release build
if [ -z "$dsh_sim" ]; then
    cargo build --release -q -p dsh-sim
    dsh_sim=target/release/dsh-sim
fi
if [ -z "$server" ]; then
    "$dsh_sim" install | tee "$out/install.txt"
    server="$(sed -n 's/^server: *//p' "$out/install.txt")"
    [ -n "$server" ] || { echo "nightly: dsh-sim install printed no server path" >&2; exit 2; }
fi
harness="$(dirname "$server")/localharness_external"
if [ -x "$harness" ]; then export ANTIGRAVITY_HARNESS_PATH="$harness"; fi
args=""
if [ "$(uname -s)" = "Linux" ]; then args=" --uid="; fi
run_args=()
read -r -a run_args <<<"${NIGHTLY_RUN_ARGS:-}" || true
status=0
"$dsh_sim" run --agent antigravity --server "$server$args" --keep-artifacts \
    --artifacts "$out/artifacts" ${run_args[@]+"${run_args[@]}"} "${paths[@]}" \
    | tee "$out/report.txt" || status=$?
if [ -d "$out/artifacts" ]; then
    "$dsh_sim" findings "$out/artifacts" >"$out/findings.txt" || status=$?
    cat "$out/findings.txt"
else
    echo "nightly: no artefacts, so no findings" >&2
    [ "$status" -ne 0 ] || status=2
fi
echo "nightly: report in $out/report.txt, findings in $out/findings.txt, artefacts in $out/artifacts" >&2
exit "$status"
