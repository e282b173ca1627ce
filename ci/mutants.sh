#!/usr/bin/env bash
# Mutation testing of the adapter with cargo-mutants: do the tests (the scenario suite
# included) fail when the adapter's code is broken on purpose?
#
#   ci/mutants.sh full                 every mutant of adapter/src (about 935; each runs the
#                                      whole workspace's tests, so many hours on 2 cores:
#                                      the nightly runs one shard a night)
#   ci/mutants.sh shard K/N            the K-th of N shards of the full run (0-based K)
#   ci/mutants.sh diff [BASE]          only the lines changed since BASE (default: origin's
#                                      main if it exists, else HEAD~1)
#   ci/mutants.sh focus [K/N]          only the files listed in ci/mutants-focus.txt (the
#                                      files changed since the last full pass), or the K-th
#                                      of N shards of them
#
# Surviving mutants ("missed") are compared with mutants.baseline, where each one the
# tests cannot kill is explained. A survivor not listed there fails the run, so a proof
# that stops proving its claim is noticed. Output: target/mutants/ (cargo-mutants' own
# mutants.out, plus unexplained.txt).
#
# MUTANTS_IN_PLACE=1 mutates this checkout in place instead of a copy, reusing its warm
# target/ (use it in a dedicated worktree only: the tree is edited while it runs).
#
# cargo-mutants is installed here when missing (not in .ci/run: this is for the nightly
# and for engineers before they stop).
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-diff}"
out="target/mutants"
mkdir -p "$out"
if ! command -v cargo-mutants >/dev/null 2>&1; then
    cargo install --locked cargo-mutants
fi
# A broken adapter fails the scenario suite at its first failing scenario instead of
# letting every later one wait for its bound.
export DSH_SIM_FAIL_FAST=1
# Every mutant runs the whole workspace's tests, the scenario suite included (cargo-mutants
# 27.1 builds its unmutated baseline with the adapter's tests only, but tests each mutant
# with `--workspace`; `--test-package` with two names did not reach dsh-sim here).
common=(--test-workspace=true --timeout 150 -o "$out")
case "$mode" in
    full)
        args=(--file 'adapter/src/**')
        ;;
    shard)
        args=(--file 'adapter/src/**' --shard "${2:?shard needs K/N}")
        ;;
    focus)
        args=()
        while IFS= read -r line; do
            line="${line%%#*}"; line="${line//[[:space:]]/}"
            [ -n "$line" ] && args+=(--file "$line")
        done < ci/mutants-focus.txt
        if [ ${#args[@]} -eq 0 ]; then
            echo "ci/mutants-focus.txt lists no file"
            exit 0
        fi
        [ -n "${2:-}" ] && args+=(--shard "$2")
        ;;
    diff)
        base="${2:-}"
        if [ -z "$base" ]; then
            base=$(git rev-parse --verify -q origin/main || git rev-parse HEAD~1)
        fi
        git diff "$base" -- adapter/src > "$out/change.diff"
        if [ ! -s "$out/change.diff" ]; then
            echo "no adapter change since $base"
            exit 0
        fi
        args=(--in-diff "$out/change.diff")
        ;;
    *)
        echo "usage: ci/mutants.sh full | shard K/N | focus [K/N] | diff [BASE]" >&2
        exit 2
        ;;
esac
if [ "${MUTANTS_IN_PLACE:-}" = 1 ]; then
    common+=(--in-place)
fi
status=0
cargo mutants "${args[@]}" "${common[@]}" || status=$?
# cargo-mutants exits 2 when mutants were missed, 3 on timeouts; judge against the
# baseline instead (lines there are `file: mutation in function — why`, without line
# numbers so they survive edits). A baseline line explains one mutant: when a function has
# more survivors of the same description than the baseline has lines for it, the extra
# ones are unexplained (so one entry cannot hide a second, killable mutant beside it).
missed="$out/mutants.out/missed.txt"
: > "$out/unexplained.txt"
if [ -f "$missed" ]; then
    sed -E 's/^([^:]+):[0-9]+:[0-9]+: /\1: /' "$missed" | sort | uniq -c |
        while read -r count key; do
            allowed=$(grep -cF -- "$key" mutants.baseline || true)
            if [ "$count" -gt "$allowed" ]; then
                echo "$key ($count survived, mutants.baseline explains $allowed)" >> "$out/unexplained.txt"
            fi
        done
fi
timeouts="$out/mutants.out/timeout.txt"
if [ -s "$out/unexplained.txt" ] || { [ -f "$timeouts" ] && [ -s "$timeouts" ]; }; then
    echo "== mutants that survive without an explanation in mutants.baseline (or time out):"
    cat "$out/unexplained.txt" "$timeouts" 2>/dev/null
    exit 1
fi
if [ "$status" -ne 0 ] && [ "$status" -ne 2 ]; then
    echo "cargo mutants failed with status $status" >&2
    exit "$status"
fi
echo "every surviving mutant is explained in mutants.baseline"
