#!/usr/bin/env bash
# Compares two benchmark documents (antigravity-acp-bench/1: `dsh-sim bench --json`,
# `node dsh-plugin/bench/binding-overhead.mjs --json`), row by row: old and new medians, the
# change, and a verdict. A row with a goal is flagged WORSE when its new spread lies wholly
# on the worse side of its old one (a goal it no longer meets is only noted unless that holds);
# rows without a goal are only reported. The work is ci/bench-compare.mjs (Node builtins).
#
#   ci/bench-compare.sh OLD.json NEW.json
#
# Exit status: 1 if any row is flagged, 0 if none, 2 for unreadable input or another schema.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $# -ne 2 ]]; then
  echo "usage: ci/bench-compare.sh OLD.json NEW.json" >&2
  exit 2
fi
exec node "$here/bench-compare.mjs" "$1" "$2"
