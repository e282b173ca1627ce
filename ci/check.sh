#!/usr/bin/env bash
# The CI checks, in order: formatting, lints, rustdoc (broken links are errors), then the
# README's test command, `ci/test.sh` (every Rust test, every YAML scenario through dsh-sim
# as its own test on the fake server, then the DSH plugin's Node tests in DSH's runtime).
# `.ci/run` calls this script. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy --all-targets -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== cargo doc (broken links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

bash ci/test.sh
