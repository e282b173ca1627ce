#!/usr/bin/env bash
# Nightly: run the scenario suite against the real Antigravity ACP server 1.3.0 instead of
# the fake (claim B01), and leave a report and the artefacts.
#
#   ci/nightly-real-server.sh [--from /path/to/agy_acp_server.par] [scenario paths...]
#
# Without --from, the pinned 1.3.0 build is installed (or repaired) and verified with
# `dsh-sim install` in the per-user cache, exactly as the adapter does for DSH; with it,
# the given build is used as it is. Scenarios marked `real_server: false` are skipped;
# expectations on the wire are judged from the client-side journal the runner keeps.
# A scenario that fails against the real server leaves, in its artefacts folder,
# `replay.yaml`: the same scenario with a `fake:` script replaying what the real server
# sent, ready to commit as a bug reproduction against the fake.
#
# The server must already be signed in (its GEMINI_HOME holds the credentials): the
# adapter never stores credentials of its own. Output: $NIGHTLY_OUT (default
# target/nightly/<UTC date>): report.txt, install.txt, artifacts/.
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
status=0
"$dsh_sim" run --server "$server$args" --artifacts "$out/artifacts" "${paths[@]}" \
    | tee "$out/report.txt" || status=$?
echo "nightly: report in $out/report.txt, artefacts in $out/artifacts" >&2
exit "$status"
