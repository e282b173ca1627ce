#!/usr/bin/env bash
# The real-agent leg (issue 35): every scenario a real agent can play, through dsh-sim's
# loop, against Gemini CLI (`gemini --acp`, pinned in ci/real-agents/package-lock.json)
# whose model is the scripted fake-gemini-api on loopback. Scenarios marked `fake_only`
# are skipped with their reason. The whole run sits in a network namespace of its own
# with only loopback up, so nothing the agent tries (telemetry, update checks, a real
# model) can leave the machine.
#
#   ci/real-agents.sh [dsh-sim run options and paths...]   (default: scenarios)
#
# Through DSH's own loop too: `ci/real-agents.sh --real-loop --node NODE scenarios` (the
# nightly runs it on Node 22 and 24; it needs the plugin built, as ci/real-loop.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== real agents: npm ci (Gemini CLI, pinned)"
npm ci --prefix ci/real-agents --ignore-scripts --no-audit --no-fund
cargo build --locked -q -p dsh-sim
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(scenarios)
run=("${CARGO_TARGET_DIR:-target}/debug/dsh-sim" run --agent gemini-cli --artifacts target/agent-artifacts "${args[@]}")

if ! command -v ip >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -qq iproute2 >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq iproute2; }
fi
echo "== real agents: dsh-sim run --agent gemini-cli, loopback only"
if unshare -n true 2>/dev/null; then
    exec unshare -n sh -c 'ip link set lo up && exec "$@"' sh "${run[@]}"
elif unshare -rn true 2>/dev/null; then
    exec unshare -rn sh -c 'ip link set lo up && exec "$@"' sh "${run[@]}"
elif [ -n "${CI:-}" ]; then
    echo "real agents: no network namespace can be made here (unshare -n refused)" >&2
    exit 2
else
    echo "real agents: no network namespace here; running with the machine's network" >&2
    exec "${run[@]}"
fi
