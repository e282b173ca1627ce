#!/usr/bin/env bash
# Reproducible build check (the nightly's): the linux-x64 release addon built twice from the
# same commit, in two checkouts at different paths (git worktrees) with separate target
# folders, then compared byte for byte (sha256).
#
#   bash ci/reproducible.sh [COMMIT]   # default HEAD
#
# Both builds get SOURCE_DATE_EPOCH (the commit's time) and map every path that differs
# between them or names this machine away: --remap-path-prefix for the checkout, the target
# folder and $CARGO_HOME (RUSTFLAGS), -ffile-prefix-map for the same in C code (CFLAGS, for
# the C the dependencies compile). Two full release builds: long on 2 cores.
#
# Exit codes: 0 identical; 1 the bytes differ (both hashes and the first differing offsets
# printed) or a build failed; 64 usage.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

[[ $# -le 1 ]] || { sed -n '2,14p' "$0" >&2; exit 64; }
commit="$(git rev-parse --verify "${1:-HEAD}^{commit}")"
epoch="$(git log -1 --format=%ct "$commit")"
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
work="$(mktemp -d "${TMPDIR:-/tmp}/agy-reproducible.XXXXXX")"
trees=()
cleanup() {
  for tree in "${trees[@]}"; do git -C "$repo" worktree remove --force "$tree" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# One build: a worktree at SRC, its own target folder, the addon to OUT.
build() {
  local src="$1" target="$2" out="$3" remap
  git -C "$repo" worktree add --detach --quiet "$src" "$commit"
  trees+=("$src")
  remap="--remap-path-prefix=$src=/build/antigravity-acp --remap-path-prefix=$target=/build/target"
  remap+=" --remap-path-prefix=$cargo_home=/cargo"
  local cmap="-ffile-prefix-map=$src=/build/antigravity-acp -ffile-prefix-map=$target=/build/target"
  cmap+=" -ffile-prefix-map=$cargo_home=/cargo"
  echo "== reproducible: release addon from $src (target $target)"
  (
    cd "$src"
    SOURCE_DATE_EPOCH="$epoch" CARGO_TARGET_DIR="$target" \
      RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }$remap" CFLAGS="$cmap" CXXFLAGS="$cmap" \
      nice node dsh-plugin/scripts/build.mjs --release --out "$out"
  )
}

build "$work/a/antigravity-acp" "$work/a/target" "$work/a.node"
build "$work/second-copy/src/antigravity-acp" "$work/second-copy/cargo-target" "$work/b.node"

a="$(sha256sum "$work/a.node" | cut -d' ' -f1)"
b="$(sha256sum "$work/b.node" | cut -d' ' -f1)"
echo "== reproducible: $commit"
echo "  first build:  $a ($(stat -c %s "$work/a.node") bytes)"
echo "  second build: $b ($(stat -c %s "$work/b.node") bytes)"
if [[ "$a" != "$b" ]]; then
  echo "ci/reproducible.sh: the two builds differ; first differing bytes (offset, a, b, octal):" >&2
  cmp -l "$work/a.node" "$work/b.node" | head -20 >&2 || true
  exit 1
fi
echo "  identical"
