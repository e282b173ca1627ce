#!/usr/bin/env bash
# Builds and packs the npm packages of the DSH plugin (dsh-plugin/), one tarball per TAG:
#
#   bash ci/package.sh [--profile debug|release] [--out DIR] TAG...
#
# TAG is a platform tag of dsh-plugin/lib/binding-platform.js (linux-x64-gnu,
# linux-arm64-gnu, darwin-x64, darwin-arm64, win32-x64-gnu, win32-arm64-gnu) or `main` (the
# main package, JS only). For a platform TAG: the addon is built for its Rust triple on this
# machine (scripts/build.mjs --no-test-hooks: never a test hook, even in a debug build; cross
# builds for linux-arm64, Windows x64 (MinGW) and Windows arm64 (zig) set up by ci/cross.sh;
# darwin tags only on a macOS host), then staged with its package.json from
# dsh-plugin/npm/TAG/, the top-level LICENSE and the THIRD-PARTY-NOTICES.md that
# `bash ci/notices.sh TRIPLE FILE SBOM` writes, the staged package.json's `files` listing
# exactly those three, and `npm pack`ed into DIR (default target/packages). `main` stages
# the main package's own `files` plus LICENSE. With GITHUB_REPOSITORY set (a hosted
# runner), every staged package.json's `repository` names it (npm checks provenance
# against it).
#
# --profile: release (default) or debug (the rehearsal in .ci/run). Cargo's outputs go
# where CARGO_TARGET_DIR says (default target/).
#
# DIR receives, per platform TAG: antigravity-acp-dsh-TAG-VERSION.tgz, the addon it holds
# (antigravity-acp-dsh.TAG.node, for attestation) and its SPDX SBOM
# (antigravity-acp-dsh.TAG.spdx.json); for `main`: antigravity-acp-dsh-VERSION.tgz
# (what ci/release-assets.sh expects). Stdout: the path of each tarball made, one a line,
# in TAG order. Progress on stderr (`== ` lines). Exit codes: 0 every TAG packed; 1 a
# build, a check or a pack failed (the tarballs packed before it stay; the failing one is
# removed); 64 a usage error or a TAG this host cannot build (a darwin tag off macOS, an
# unknown tag), refused before anything is built.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'ci/package.sh: %s\n' "$1" >&2; exit "${2:-1}"; }
# Associative arrays and empty arrays under `set -u` need bash 4.4 (macOS's /bin/bash is 3.2:
# the hosted macOS runners put Homebrew's bash first in PATH).
((BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4))) || die "needs bash 4.4 or later, not $BASH_VERSION" 64
usage() { sed -n '2,30p' "$0" >&2; exit 64; }

profile=release
out=target/packages
tags=()
while (($# > 0)); do
  case "$1" in
    --profile) [[ $# -ge 2 ]] || usage; profile="$2"; shift 2 ;;
    --out) [[ $# -ge 2 ]] || usage; out="$2"; shift 2 ;;
    -h | --help) usage ;;
    -*) printf 'ci/package.sh: unknown option %s\n' "$1" >&2; usage ;;
    *) tags+=("$1"); shift ;;
  esac
done
((${#tags[@]} > 0)) || usage
[[ "$profile" == debug || "$profile" == release ]] || die "--profile is debug or release, not $profile" 64

# The triple of each platform tag, from the loader's own table.
triple_of() {
  node --input-type=module -e "
    import { TARGETS } from './dsh-plugin/lib/binding-platform.js';
    const t = TARGETS[process.argv[1]];
    if (!t) process.exit(1);
    console.log(t.triple);" "$1"
}

host_os="$(uname -s)"
host_triple="$(rustc -vV | sed -n 's/^host: //p')"
declare -A triples=()
for tag in "${tags[@]}"; do
  [[ "$tag" == main ]] && continue
  triple="$(triple_of "$tag")" || die "unknown TAG $tag (known: main and the folders of dsh-plugin/npm/)" 64
  triples[$tag]="$triple"
  if [[ "$triple" == *-apple-darwin && "$host_os" != Darwin ]]; then
    die "$tag ($triple) is built on a macOS host only (this host is $host_os): its addon links against macOS's SDK; run ci/package.sh $tag on a macOS runner" 64
  fi
done

mkdir -p "$out"
out="$(cd "$out" && pwd)"
stage_root="$(mktemp -d "${TMPDIR:-/tmp}/agy-package.XXXXXX")"
trap 'rm -rf "$stage_root"' EXIT
version="$(node -p "require('./dsh-plugin/package.json').version")"

# Rewrites a staged package.json's `files` (a JSON array given as $2), and its `repository`
# from GITHUB_REPOSITORY when set.
set_files() {
  node -e "
    const fs = require('node:fs');
    const file = process.argv[1];
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
    pkg.files = JSON.parse(process.argv[2]);
    const repo = process.env.GITHUB_REPOSITORY;
    if (repo) pkg.repository = { type: 'git', url: 'git+https://github.com/' + repo + '.git' };
    fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');" "$1" "$2"
}

# npm pack of a staged folder into $out; checks the tarball holds exactly package.json and
# the `files` given, and prints its path.
pack() {
  local dir="$1" expected="$2" name tarball listed
  name="$(cd "$dir" && npm pack --ignore-scripts --json --pack-destination "$out" | node -e \
    "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s)[0].filename))")"
  tarball="$out/$name"
  listed="$(tar -tzf "$tarball" | sed 's|^package/||' | grep -v '/$' | LC_ALL=C sort | tr '\n' ' ')"
  # A tarball that fails a check is removed, so that no publish can pick it up.
  [[ "$listed" == "$expected" ]] || { rm -f "$tarball"; die "$tarball holds [$listed], not exactly [$expected]"; }
  [[ " $listed" == *" LICENSE "* ]] || { rm -f "$tarball"; die "$tarball ships no LICENSE"; }
  log "packed $tarball ($(du -h "$tarball" | cut -f1))"
  echo "$tarball"
}

# The cross toolchains (ci/cross.sh: Debian's cross compilers, MinGW, zig), set up once.
cross_ready=0
cross_setup() {
  ((cross_ready == 0)) || return 0
  # shellcheck source=ci/cross.sh disable=SC1091
  source ci/cross.sh
  install >&2
  cross_env
  cross_ready=1
}

package_platform() {
  local tag="$1" triple="${triples[$1]}" stage addon manifest
  stage="$stage_root/$tag"
  mkdir -p "$stage"
  addon="antigravity-acp-dsh.$tag.node"
  manifest="dsh-plugin/npm/$tag/package.json"
  [[ "$(node -p "require('./$manifest').version")" == "$version" ]] ||
    die "$manifest is not at the main package's version $version"
  local build=(node dsh-plugin/scripts/build.mjs "--$profile" --no-test-hooks --out "$stage/$addon")
  case "$triple" in
    "$host_triple") ;; # the host's own build: cargo's host outputs (target/debug), shared with the tests'
    x86_64-pc-windows-gnu)
      if [[ "$host_os" == MINGW* || "$host_os" == MSYS* ]]; then
        # On Windows the GNU build is native: the GNU target and a MinGW gcc (ci/native.sh).
        # shellcheck source=ci/native.sh disable=SC1091
        source ci/native.sh
        windows_toolchain
      else
        cross_setup
      fi
      build+=(--target "$triple")
      ;;
    aarch64-unknown-linux-gnu | aarch64-pc-windows-gnullvm)
      cross_setup
      build+=(--target "$triple")
      # Windows on arm64 links against a stub node.lib of its own (zig's lld).
      [[ "$triple" != aarch64-pc-windows-gnullvm ]] || build=(env "LIBNODE_PATH=$(stub_libnode_arm64)" "${build[@]}")
      ;;
    *) build+=(--target "$triple") ;;
  esac
  log "$tag: the $profile addon for $triple, without test hooks"
  "${build[@]}" >&2
  # The test hooks' JS names are strings in any addon that registers them.
  if grep -qaE 'testPanic|testUnfinishedStream|benchDrain' "$stage/$addon"; then
    die "$stage/$addon carries a test hook or bench export: a package must never ship one"
  fi
  cp "$manifest" "$stage/package.json"
  set_files "$stage/package.json" "[\"$addon\", \"LICENSE\", \"THIRD-PARTY-NOTICES.md\"]"
  cp LICENSE "$stage/LICENSE"
  bash ci/notices.sh "$triple" "$stage/THIRD-PARTY-NOTICES.md" "$out/antigravity-acp-dsh.$tag.spdx.json" >&2
  [[ -s "$stage/THIRD-PARTY-NOTICES.md" ]] || die "ci/notices.sh $triple wrote no notices"
  [[ -s "$out/antigravity-acp-dsh.$tag.spdx.json" ]] || die "ci/notices.sh $triple wrote no SBOM"
  cp "$stage/$addon" "$out/$addon"
  pack "$stage" "LICENSE THIRD-PARTY-NOTICES.md $addon package.json "
}

package_main() {
  local stage="$stage_root/main" files expected
  mkdir -p "$stage"
  files="$(node -p "JSON.stringify([...require('./dsh-plugin/package.json').files, 'LICENSE'])")"
  log "main: antigravity-acp-dsh $version (JS; its files $files)"
  # The main package's own `files`, as npm would take them from dsh-plugin/ (a pack there,
  # unpacked), plus the licence.
  local inner
  inner="$(cd dsh-plugin && npm pack --ignore-scripts --json --pack-destination "$stage_root" | node -e \
    "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s)[0].filename))")"
  tar -xzf "$stage_root/$inner" -C "$stage" --strip-components=1
  cp LICENSE "$stage/LICENSE"
  set_files "$stage/package.json" "$files"
  if find "$stage" -name '*.node' | grep -q .; then die "the main package would ship an addon: $(find "$stage" -name '*.node')"; fi
  expected="$(cd "$stage" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | tr '\n' ' ')"
  pack "$stage" "$expected"
}

for tag in "${tags[@]}"; do
  if [[ "$tag" == main ]]; then package_main; else package_platform "$tag"; fi
done
