#!/usr/bin/env bash
# The nightly job: mutation testing of the whole adapter (ci/mutants.sh full, judged against
# mutants.baseline: a new unexplained survivor or any timeout fails the night), then the
# scenario suite against the real 1.3.0 build (ci/nightly-real-server.sh) unless
# --no-real-server is given (a machine without a signed-in server). Exits non-zero when
# either fails; both always run.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
bash ci/mutants.sh full || status=1
if [ "${1:-}" != "--no-real-server" ]; then
    bash ci/nightly-real-server.sh || status=1
fi
exit "$status"
