/**
 * The binding benchmark (`npm --prefix dsh-plugin run bench`): how many chunks per second
 * DSH receives through `ctx.llm.stream` (the plugin, the binding's batches, DSH's
 * runtime), against the adapter's own rate on the same scripted stream drained inside
 * Rust (`benchDrain`, in an addon this script builds with the `bench` feature: the shipped
 * addon has none), in the same run; and how
 * long a text turn's first chunk takes across the binding and in Rust. A third row reads
 * the same stream through the binding one chunk per call (`nextBatch(1)`), the design the
 * batches replace. Release builds of
 * the addon and the fake; every figure is the median of several runs on a warm process.
 *
 *   node bench/binding.mjs [--chunks 20000] [--runs 5] [--json FILE]
 * @module bench/binding
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1];
};
const CHUNKS = Number(arg('--chunks', 20000));
const RUNS = Number(arg('--runs', 5));
const jsonOut = arg('--json', undefined);

// Release builds: the fake, and an addon of the bench's own with the `bench` feature
// (`benchDrain`), copied aside (the package's own copy is a build without it).
const cargo = (args) => execFileSync('cargo', args, { cwd: pkg, stdio: ['ignore', 'ignore', 'inherit'] });
cargo(['build', '--locked', '--release', '-p', 'fake-antigravity']);
const addon = join(pkg, 'bench', '.addon', 'antigravity-acp-dsh.release-bench.node');
execFileSync(process.execPath, [join(pkg, 'scripts', 'build.mjs'), '--release', '--bench', '--out', addon], { stdio: ['ignore', 'ignore', 'inherit'] });
process.env.ANTIGRAVITY_ACP_DSH_ADDON = addon;
const target = process.env.CARGO_TARGET_DIR ?? join(pkg, '..', 'target');
process.env.FAKE_ANTIGRAVITY ??= join(target, 'release', 'fake-antigravity');
if (!existsSync(process.env.FAKE_ANTIGRAVITY)) throw new Error(`no release fake at ${process.env.FAKE_ANTIGRAVITY}`);

const { default: plugin } = await import('../index.js');
const { binding } = await import('../lib/binding.js');
const { configJson } = await import('../lib/config.js');
const { fakeServer } = await import('../test/helpers/fake.mjs');
const { startHost } = await import('../test/helpers/host.mjs');
const { request, user } = await import('../test/helpers/requests.mjs');

const fake = fakeServer({
  turns: [
    { match: { prompt_contains: 'stream it' }, steps: [{ stream: { text: 'x'.repeat(CHUNKS), code_points: 1 } }] },
    { match: { prompt_contains: 'first chunk' }, steps: [{ text: 'Hi.' }] },
  ],
});
const config = { server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow };
const host = await startHost(plugin, config);
const rust = new binding.Provider(configJson({ provider: 'antigravity-acp', ...config }));
const settle = (json) => {
  const outcome = JSON.parse(json);
  if (outcome.error) throw new Error(`${outcome.error.code}: ${outcome.error.message}`);
  return outcome.ok;
};

/** One stream through ctx.llm: chunks, ms to the first chunk, ms in all. */
async function throughDsh(prompt) {
  const started = performance.now();
  let first;
  let chunks = 0;
  let finish;
  for await (const chunk of host.llm.stream(request([user(prompt)]))) {
    first ??= performance.now() - started;
    chunks++;
    if (chunk.type === 'finish') finish = chunk.reason.kind;
  }
  return { chunks, firstChunkMs: first, elapsedMs: performance.now() - started, finish };
}

/** The same stream drained inside Rust. */
async function inRust(prompt) {
  return settle(await binding.benchDrain(rust, JSON.stringify(request([user(prompt)]))));
}

/** The same stream through the binding, one chunk per `nextBatch` call. */
async function oneByOne(prompt) {
  const started = performance.now();
  const handle = rust.stream(JSON.stringify(request([user(prompt)])), null);
  let first;
  let chunks = 0;
  let finish;
  for (;;) {
    const batch = settle(await handle.nextBatch(1));
    if (batch.length === 0) break;
    first ??= performance.now() - started;
    chunks += batch.length;
    if (batch[0].type === 'finish') finish = batch[0].reason.kind;
  }
  return { chunks, firstChunkMs: first, elapsedMs: performance.now() - started, finish };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const measure = async (fn, prompt) => {
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await fn(prompt));
  for (const run of runs) if (run.finish !== 'stop') throw new Error(`a run finished ${run.finish}`);
  return runs;
};

try {
  // Warm both: each provider's no-tool lane keeps its process for the runs that follow.
  await throughDsh('Please stream it');
  await inRust('Please stream it');
  const dsh = await measure(throughDsh, 'Please stream it');
  const native = await measure(inRust, 'Please stream it');
  const single = await measure(oneByOne, 'Please stream it');
  const dshFirst = await measure(throughDsh, 'Say your first chunk');
  const nativeFirst = await measure(inRust, 'Say your first chunk');

  const rate = (runs) => median(runs.map((r) => r.chunks / (r.elapsedMs / 1000)));
  const results = {
    chunksPerStream: dsh[0].chunks,
    runs: RUNS,
    node: process.version,
    throughput: {
      dshChunksPerSec: Math.round(rate(dsh)),
      rustChunksPerSec: Math.round(rate(native)),
      oneChunkPerCallChunksPerSec: Math.round(rate(single)),
      ratio: Number((rate(dsh) / rate(native)).toFixed(3)),
    },
    firstChunkMs: {
      dsh: Number(median(dshFirst.map((r) => r.firstChunkMs)).toFixed(2)),
      rust: Number(median(nativeFirst.map((r) => r.firstChunkMs)).toFixed(2)),
    },
    streamMs: {
      dsh: Number(median(dsh.map((r) => r.elapsedMs)).toFixed(1)),
      rust: Number(median(native.map((r) => r.elapsedMs)).toFixed(1)),
      oneChunkPerCall: Number(median(single.map((r) => r.elapsedMs)).toFixed(1)),
    },
  };
  console.log(`binding benchmark: ${results.chunksPerStream} chunks per stream, median of ${RUNS} runs, ${process.version}`);
  console.table({
    'through ctx.llm.stream (JS)': {
      'chunks/s': results.throughput.dshChunksPerSec,
      'stream ms': results.streamMs.dsh,
      'first chunk ms': results.firstChunkMs.dsh,
    },
    'drained in Rust (benchDrain)': {
      'chunks/s': results.throughput.rustChunksPerSec,
      'stream ms': results.streamMs.rust,
      'first chunk ms': results.firstChunkMs.rust,
    },
    'binding, one chunk per call': {
      'chunks/s': results.throughput.oneChunkPerCallChunksPerSec,
      'stream ms': results.streamMs.oneChunkPerCall,
      'first chunk ms': 'n/a',
    },
  });
  console.log(`JS/Rust throughput ratio: ${results.throughput.ratio}`);
  if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify(results, null, 2)}\n`);
} finally {
  await rust.dispose();
  await host.stop();
  fake.remove();
}
