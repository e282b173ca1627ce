#!/usr/bin/env bash
# The CI checks, in order: formatting, lints, rustdoc (broken links are errors), then the
# README's test command (which runs every YAML scenario through dsh-sim as its own test, on
# the fake server). `.ci/run` calls this script. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy --all-targets -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== cargo doc (broken links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

echo "== cargo test --workspace"
cargo test --workspace --locked
