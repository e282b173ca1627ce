#!/usr/bin/env bash
# Nightly: run the scenario suite against a real ACP server build instead of the fake
# (claim B01). Scenarios marked for the fake only are skipped; wire checks that need the
# fake's journal are reported as skipped.
#
#   ci/nightly-real-server.sh /path/to/agy_acp_server.par [scenario paths...]
#
# The server must already be signed in (its GEMINI_HOME holds the credentials): the
# adapter never stores credentials of its own. ANTIGRAVITY_HARNESS_PATH is set to the
# sibling `localharness_external` when the archive layout has one.
set -euo pipefail
cd "$(dirname "$0")/.."
server="${1:?usage: $0 /path/to/agy_acp_server.par [scenario paths...]}"
shift || true
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=(scenarios)
harness="$(dirname "$server")/localharness_external"
if [ -x "$harness" ]; then export ANTIGRAVITY_HARNESS_PATH="$harness"; fi
args=""
if [ "$(uname -s)" = "Linux" ]; then args=" --uid="; fi
exec cargo run --release -p dsh-sim -- run --server "$server$args" "${paths[@]}"
