#!/usr/bin/env bash
# The workspace's tests, cross-built for TARGET and run under its emulator (README
# "Platforms"): Wine for x86_64-pc-windows-gnu, qemu-user for aarch64-unknown-linux-gnu.
# `ci/cross.sh wine-test` and `ci/cross.sh qemu-test` call it with the runner set
# (CARGO_TARGET_<TRIPLE>_RUNNER); run on its own it sets nothing.
#
#   bash ci/platform-tests.sh TARGET [PACKAGE[:lib|:TEST]…]   # default: every package of the leg
#
# A test that cannot pass under that emulator for a reason that is the emulator's, not
# ours, is listed with the reason in `ci/platform-gaps/TARGET.txt` (one line: the
# test's name as libtest prints it, a tab or spaces, `#` and the reason). Listed tests
# are not run (`--skip NAME --exact`), are reported with their reasons and never count
# as passes. Every other test must pass. The summary gives, per test binary, how many
# passed, failed, were ignored and were listed, and the share of each package's tests
# that ran and passed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target="${1:?usage: ci/platform-tests.sh TARGET [PACKAGE...]}"
shift
case "$target" in
  x86_64-pc-windows-gnu) default_packages=(test-support antigravity-acp fake-antigravity dsh-sim) ;;
  # Under qemu-user no aarch64 child can start by itself (binfmt_misc is not mounted),
  # so this leg runs the tests that spawn no program of ours: the adapter's and the
  # fake's unit tests (README "Platforms").
  aarch64-unknown-linux-gnu) default_packages=(antigravity-acp:lib fake-antigravity:lib test-support:lib) ;;
  *) default_packages=(antigravity-acp) ;;
esac
packages=("$@")
((${#packages[@]} > 0)) || packages=("${default_packages[@]}")

gaps_file="ci/platform-gaps/$target.txt"
skips=()
if [[ -f "$gaps_file" ]]; then
  while IFS= read -r line; do
    name="$(sed -E 's/[[:space:]]*#.*$//' <<<"$line")"
    [[ -n "$name" ]] && skips+=(--skip "$name")
  done <"$gaps_file"
fi

log_dir="target/platform-tests/$target"
mkdir -p "$log_dir"
status=0
for spec in "${packages[@]}"; do
  package="${spec%%:*}"
  selection=()
  case "$spec" in
    *:lib) selection=(--lib) ;;
    *:*) selection=(--test "${spec#*:}") ;;
  esac
  log="$log_dir/$package.log"
  printf '== %s: cargo test --target %s -p %s %s\n' "$target" "$target" "$package" "${selection[*]}" >&2
  # --exact makes each --skip name one test, not every test whose name contains it.
  if ! cargo test --locked --target "$target" -p "$package" "${selection[@]}" --no-fail-fast \
    -- --exact "${skips[@]}" >"$log" 2>&1; then
    status=1
  fi
  awk -v package="$package" '
    /^ *Running / { binary = $2; next }
    / \.\.\. ok$/ { passed[binary]++; total_passed++ }
    / \.\.\. FAILED$/ { failed[binary]++; total_failed++; failures[++n] = binary ": " $2 }
    / \.\.\. ignored/ { ignored[binary]++; total_ignored++ }
    END {
      for (b in passed) seen[b] = 1
      for (b in failed) seen[b] = 1
      for (b in ignored) seen[b] = 1
      for (b in seen) printf "   %-48s %4d passed %3d failed %3d ignored\n", b, passed[b], failed[b], ignored[b]
      all = total_passed + total_failed
      share = all > 0 ? 100 * total_passed / all : 100
      printf "   %s: %d passed, %d failed, %d ignored (%.1f%% of those run passed)\n", package, total_passed, total_failed, total_ignored, share
      for (i = 1; i <= n; i++) printf "   FAILED %s\n", failures[i]
    }' "$log" >&2
  grep -E '^error(\[|:)' "$log" >&2 || true
done

if [[ -f "$gaps_file" ]]; then
  printf '== listed in %s, not run (never a pass):\n' "$gaps_file" >&2
  grep -Ev '^[[:space:]]*(#|$)' "$gaps_file" | sed 's/^/   /' >&2 || true
fi
if ((status != 0)); then
  printf '== %s: a test failed; the logs are in %s/\n' "$target" "$log_dir" >&2
fi
exit "$status"
