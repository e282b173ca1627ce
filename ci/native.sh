#!/usr/bin/env bash
# The tests on a native Windows or macOS machine (the hosted workflows' native jobs:
# .github/workflows/ci.yml and release.yml). Linux runs them through `.ci/run`; this
# machine runs Windows only under Wine and macOS not at all, so these legs are proven only
# by the hosted runs (README "Platforms").
#
#   bash ci/native.sh rust     # the workspace's tests, the YAML scenarios among them
#   bash ci/native.sh node     # the DSH plugin's Node tests, on the `node` in PATH
#   bash ci/native.sh node-prebuilt DIR
#                              # the same against an addon and fake built elsewhere
#                              # (`ci/cross.sh test-kit`: Windows on arm64, whose
#                              # gnullvm build links only through zig on Linux)
#   bash ci/native.sh load ADDON
#                              # a release addon loads and exports the plugin's classes
#   bash ci/native.sh          # rust, then node
#
# Windows builds the addon's own ABI, x86_64-pc-windows-gnu (the GNU toolchain and its
# MinGW gcc, which aws-lc-sys needs), and skips what ci/platform-gaps/ lists for Windows,
# as the Wine legs do. macOS builds for the host (arm64 or x64). Under Git Bash on
# Windows, run from the repository's root. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf '== %s\n' "$*" >&2; }

case "$(uname -s)" in
  Darwin) system=macos ;;
  MINGW* | MSYS* | CYGWIN*) system=windows ;;
  Linux) system=linux ;;
  *) log "ci/native.sh: no leg for $(uname -s)"; exit 2 ;;
esac

# The GNU toolchain for Windows, and a MinGW gcc on PATH (the hosted image ships one under
# C:\mingw64 or MSYS2; Chocolatey installs it otherwise).
mingw_on_path() {
  command -v gcc >/dev/null 2>&1 && return 0
  local dir
  for dir in /c/mingw64/bin /c/msys64/mingw64/bin /c/ProgramData/mingw64/mingw64/bin; do
    [[ -x "$dir/gcc.exe" ]] && export PATH="$dir:$PATH" && return 0
  done
  return 1
}
windows_toolchain() {
  rustup target add x86_64-pc-windows-gnu >&2
  if ! mingw_on_path; then
    log "installing MinGW-w64 (choco)"
    choco install -y --no-progress mingw >&2
    mingw_on_path || { log "no gcc after installing MinGW-w64"; return 1; }
  fi
  export CARGO_BUILD_TARGET=x86_64-pc-windows-gnu
  export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS="-C target-feature=+crt-static"
}

rust_tests() {
  if [[ "$system" == windows ]]; then
    windows_toolchain
    log "the workspace's tests, natively on Windows (x86_64-pc-windows-gnu)"
    bash ci/platform-tests.sh x86_64-pc-windows-gnu
  else
    log "the workspace's tests, natively on $system ($(uname -m))"
    cargo test --workspace --locked
  fi
}

node_tests() {
  local kit="${1:-}" target_args=() fake=target/debug/fake-antigravity gaps=/dev/null status=0 files=() name
  local addon=""
  if [[ -n "$kit" ]]; then
    fake="$kit/fake-antigravity"
    [[ "$system" != windows ]] || fake="$fake.exe"
    addon="$PWD/$kit/antigravity-acp-dsh.node"
    [[ "$system" != windows ]] || gaps=ci/platform-gaps/node-win32-x64.txt
  elif [[ "$system" == windows ]]; then
    windows_toolchain
    target_args=(--target x86_64-pc-windows-gnu)
    fake=target/x86_64-pc-windows-gnu/debug/fake-antigravity.exe
    gaps=ci/platform-gaps/node-win32-x64.txt
  fi
  # What only the Linux x64 leg can run (pack.test.mjs packs and installs the linux-x64
  # package), listed with its reason.
  [[ "$gaps" != /dev/null || ("$system" == linux && "$(uname -m)" == x86_64) ]] || gaps=ci/platform-gaps/node-native.txt
  log "npm ci (dsh-plugin)"
  # The Node 22 and 24 builds the Linux tests run on are Linux x64 devDependencies: npm
  # refuses them elsewhere unless forced, and they are never run here (the job's own Node is).
  if [[ "$system" == linux && "$(uname -m)" == x86_64 ]]; then
    npm --prefix dsh-plugin ci --no-audit --no-fund
  else
    npm --prefix dsh-plugin ci --no-audit --no-fund --force
  fi
  if [[ -z "$kit" ]]; then
    log "the fake server and the debug addon (with its test hooks)"
    cargo build --locked "${target_args[@]}" -p fake-antigravity
    node dsh-plugin/scripts/build.mjs --debug "${target_args[@]}"
  fi
  for name in $(cd dsh-plugin/test && ls -- *.test.mjs); do
    grep -q "^$name " "$gaps" || files+=("test/$name")
  done
  mkdir -p target/native
  fake="$PWD/$fake"
  # Node on Windows takes C:\ paths, not Git Bash's /c/ ones.
  if [[ "$system" == windows ]]; then
    fake="$(cygpath -w "$fake")"
    [[ -z "$addon" ]] || addon="$(cygpath -w "$addon")"
  fi
  log "node --test on $(node --version) ($system, $(node -p process.arch)): ${#files[@]} files"
  (cd dsh-plugin && ANTIGRAVITY_ACP_DSH_ADDON="$addon" FAKE_ANTIGRAVITY="$fake" node --test --test-reporter=spec \
    --test-reporter-destination=stdout --test-reporter=tap \
    --test-reporter-destination=../target/native/tests.tap "${files[@]}") || status=$?
  node dsh-plugin/scripts/tap-verdict.mjs "node-$system-tests" target/native/tests.tap || status=1
  return "$status"
}

# A release addon loads on this machine's Node and exports the plugin's classes (release.yml
# loads each one it is about to publish on a machine of its own platform).
load_addon() {
  local file
  file="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
  [[ "$system" != windows ]] || file="$(cygpath -w "$file")"
  node -e "
    const addon = require(process.argv[1]);
    for (const name of ['Provider', 'runUserCommand', 'startDoctor', 'startLogin']) {
      if (typeof addon[name] !== 'function') throw new Error('the addon exports no ' + name);
    }
    const hooks = Object.keys(addon).filter((name) => /^(test|bench)/.test(name));
    if (hooks.length) throw new Error('the addon exports test hooks: ' + hooks.join(', '));
    console.log('loaded ' + process.argv[1] + ' on node ' + process.version + ' ' + process.arch);" "$file"
}

# Sourced (`source ci/native.sh`, as ci/package.sh does on Windows), it only defines its
# functions.
[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0

case "${1:-all}" in
  rust) rust_tests ;;
  node) node_tests ;;
  node-prebuilt) node_tests "${2:?usage: ci/native.sh node-prebuilt DIR}" ;;
  load) load_addon "${2:?usage: ci/native.sh load ADDON}" ;;
  all) rust_tests && node_tests ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
