#!/usr/bin/env bash
# The tests whose check needs an unprivileged user, run as one (issue 37 §5). CI runs as
# root, and root's server holds CAP_SYS_PTRACE, which lets it read its parent's
# `/proc/<pid>/environ` through Landlock: `adapter/tests/confinement.rs` skips that check
# as root. Here the built confinement test runs again as `nobody` (setpriv), with
# ANTIGRAVITY_ACP_TEST_UNPRIVILEGED=1, which makes the test fail if it still runs as root,
# so the check cannot be skipped silently.
#
#   ci/unprivileged.sh      # Linux; as root (CI). As another user, `cargo test` already
#                           # ran these checks unprivileged, and this says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(uname -s)" != Linux ]; then
  echo "== unprivileged: Linux only (the confinement test is Linux's)"; exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "== unprivileged: already unprivileged (uid $(id -u)); cargo test ran the checks"; exit 0
fi
command -v setpriv >/dev/null || { echo "setpriv (util-linux) is needed to drop root" >&2; exit 1; }

echo "== the confinement test as an unprivileged user (setpriv, uid nobody)"
# The workspace's own build of the test (`cargo test --workspace` made it just before):
# `-p antigravity-acp` alone would resolve features differently and rebuild half of it.
binary=$(cargo test --workspace --locked -q --no-run --message-format=json |
  node -e '
    let out = "";
    process.stdin.on("data", (c) => (out += c)).on("end", () => {
      for (const line of out.split("\n")) {
        if (!line.startsWith("{")) continue;
        const m = JSON.parse(line);
        if (m.reason === "compiler-artifact" && m.executable && m.target.name === "confinement") console.log(m.executable);
      }
    });')
[ -n "$binary" ] || { echo "the confinement test binary was not found" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
chown 65534:65534 "$scratch"
# Every folder above the binary must let `nobody` through.
setpriv --reuid=65534 --regid=65534 --clear-groups -- \
  env -i PATH="$PATH" HOME="$scratch" TMPDIR="$scratch" ANTIGRAVITY_ACP_TEST_UNPRIVILEGED=1 \
  "$binary" --test-threads 1
