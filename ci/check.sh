#!/usr/bin/env bash
# The CI checks, in order: formatting, lints, rustdoc (broken links are errors), the DSH
# plugin's JS type-checked against its index.d.ts (tsc, after `npm ci`; a second pass on
# dsh-llm 0.1.1-rc.2, after `npm ci` in ci/dsh-llm-0.1.1), the JS linted and its
# format checked (Biome, `npm run lint`: dsh-plugin/ and ci/bench-compare.mjs), then the README's
# test command, `ci/test.sh` (every Rust test, every YAML scenario through dsh-sim as its
# own test on the fake server, then the DSH plugin's Node tests in DSH's runtime).
# Then the other platforms' share (ci/cross.sh ci: clippy for Windows and macOS arm64, and
# the scenario suite as Windows processes under Wine; the rest is nightly's). `.ci/run`
# calls this script. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy --all-targets -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== cargo doc (broken links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

echo "== tsc --checkJs --noEmit (dsh-plugin: index.js and lib/ against index.d.ts, on dsh-llm 0.1.0-rc.8 and 0.1.1-rc.2)"
npm --prefix dsh-plugin ci --no-audit --no-fund
npm --prefix ci/dsh-llm-0.1.1 ci --no-audit --no-fund
npm --prefix dsh-plugin run typecheck

echo "== biome check (the JS: recommended lints, and the formatter's check)"
npm --prefix dsh-plugin run lint

bash ci/test.sh

echo "== other platforms: clippy for Windows and macOS arm64, the scenarios under Wine"
bash ci/cross.sh ci
