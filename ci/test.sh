#!/usr/bin/env bash
# The README's test command: the pinned Gemini CLI (ci/real-agents, which the nightly's test
# runs), every Rust test of the workspace (unit tests, the fake's end-to-end tests, every
# YAML scenario through dsh-sim as its own test), under root the confinement test again
# as an unprivileged user (`ci/unprivileged.sh`), the scenarios a real agent can play
# against Gemini CLI with a scripted model (`ci/real-agents.sh`), then the DSH
# plugin's Node tests inside DSH's real runtime on Node 22 and Node 24 (`ci/node.sh`).
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== npm ci ci/real-agents (the pinned Gemini CLI: run --agent, dsh-sim/tests/nightly.rs)"
npm ci --prefix ci/real-agents --ignore-scripts --no-audit --no-fund

echo "== cargo test --workspace"
cargo test --workspace --locked

bash ci/unprivileged.sh

bash ci/real-agents.sh

bash ci/node.sh
