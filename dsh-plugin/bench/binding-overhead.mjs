/**
 * The binding's overhead: what the Node side (the binding's crossings, the plugin, DSH's
 * runtime) adds to the adapter's own time in Rust (`npm --prefix dsh-plugin run bench`). How
 * many chunks per second DSH receives through `ctx.llm.stream` (the plugin, the binding's
 * batches, DSH's runtime), against two floors in the same run: the adapter's own rate on the
 * same scripted stream drained inside Rust (`benchDrain`, in an addon this script builds
 * with the `bench` feature: the shipped addon has none), and DSH's runtime alone, reading
 * the same chunks from a plain JS async generator registered as a second adapter in the same
 * host (`bench/js-floor.mjs`); and how long a text turn's first chunk takes across the
 * binding and in Rust. A fourth row reads the stream through the binding one chunk per call
 * (`nextBatch(1)`), the design the batches replace. Release builds of the addon and the
 * fake, on warm processes.
 *
 * Each of `--runs` repetitions measures every figure back to back (binding through DSH,
 * Rust drain, JS floor, one chunk per call, then the first-chunk turns), so each
 * repetition's ratios compare figures taken under the same load; the rows report the
 * median, min and max over repetitions, in the `antigravity-acp-bench/1` document
 * (`bench/report.mjs`) that `--json FILE` writes and `ci/bench-compare.sh` compares.
 *
 *   node bench/binding-overhead.mjs [--chunks 20000] [--runs 5] [--json FILE]
 * @module bench/binding-overhead
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { FLOOR_PROVIDER, floorPlugin } from './js-floor.mjs';
import { releaseBuilds } from './release.mjs';
import { document, median, printRows, row, spread } from './report.mjs';
import { DshTurns, PROMPTS, replayKey, turnRows, turnScripts } from './turns.mjs';

const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1];
};
const wholeArg = (name, fallback) => {
  const value = Number(arg(name, fallback));
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} wants a whole number of at least 1`);
  return value;
};
const CHUNKS = wholeArg('--chunks', 20000);
const RUNS = wholeArg('--runs', 5);
const jsonOut = arg('--json', undefined);
/** Text turns per repetition for the first-chunk figures (one turn alone is too noisy). */
const FIRST_CHUNK_TURNS = 5;
const STREAM_PROMPT = 'Please stream it';
const FIRST_CHUNK_PROMPT = PROMPTS.text;

releaseBuilds();

const { default: plugin } = await import('../index.js');
const binding = (await import('../lib/binding.js')).binding();
const { configJson } = await import('../lib/config.js');
const { settle } = await import('../lib/failure.js');
const { fakeServer } = await import('../support/fake.mjs');
const { startHost } = await import('../support/host.mjs');
const { request, user } = await import('../support/requests.mjs');
const { eventually } = await import('../support/wait.mjs');

const fake = fakeServer({
  turns: [
    { match: { prompt_contains: 'stream it' }, steps: [{ stream: { text: 'x'.repeat(CHUNKS), code_points: 1 } }] },
    ...turnScripts(RUNS),
  ],
});
const config = { server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow };
const host = await startHost(plugin, config);
const rust = new binding.Provider(configJson({ provider: 'antigravity-acp', ...config }));
const turns = new DshTurns({
  host,
  drainInRust: async (options) => settle(await binding.benchDrain(rust, JSON.stringify(options))),
  request,
  user,
});

/**
 * One stream through ctx.llm (the binding's provider, or the JS floor's): chunks, ms to
 * the first chunk, ms in all; with `capture`, the chunk objects too.
 */
async function throughDsh(prompt, { provider, capture = false } = {}) {
  const extra = provider === undefined ? {} : { provider };
  const captured = capture ? [] : undefined;
  const started = performance.now();
  let first;
  let chunks = 0;
  let finish;
  let characters = 0;
  for await (const chunk of host.llm.stream(request([user(prompt)], extra))) {
    first ??= performance.now() - started;
    chunks++;
    if (chunk.type === 'text-delta') characters += [...chunk.text].length;
    captured?.push(chunk);
    if (chunk.type === 'finish') finish = chunk.reason.kind;
  }
  return { chunks, characters, firstChunkMs: first, elapsedMs: performance.now() - started, finish, captured };
}

/** The same stream through the JS-generator floor adapter, read as the binding's is. */
const throughFloor = (prompt) => throughDsh(prompt, { provider: FLOOR_PROVIDER });

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

/**
 * `run`, checked: it finished `stop`, and (where the reader counts them) its text deltas
 * carried all `characters` of the script. The adapter joins chunks that queued up into one
 * delta, so the number of chunks varies from run to run; the text does not.
 */
function checked(label, run, characters) {
  if (run.finish !== 'stop') throw new Error(`${label}: a run finished ${run.finish}`);
  if (characters !== undefined && run.characters !== undefined && run.characters !== characters) {
    throw new Error(`${label}: ${run.characters} characters streamed, not ${characters}`);
  }
  return run;
}
/** Server chunks (one character each) per second: the rate the Rust bench reports too. */
const rate = (run) => CHUNKS / (run.elapsedMs / 1000);

/** One repetition: every figure, back to back. */
async function repetition() {
  const stream = async (label, fn) => rate(checked(label, await fn(STREAM_PROMPT), CHUNKS));
  const dsh = await stream('through ctx.llm.stream', throughDsh);
  const native = await stream('drained in Rust', inRust);
  const floor = await stream('JS-generator floor', throughFloor);
  const single = await stream('one chunk per call', oneByOne);
  const dshFirst = [];
  const nativeFirst = [];
  for (let i = 0; i < FIRST_CHUNK_TURNS; i++) {
    dshFirst.push(checked('first chunk through ctx.llm.stream', await throughDsh(FIRST_CHUNK_PROMPT)).firstChunkMs);
    nativeFirst.push(checked('first chunk in Rust', await inRust(FIRST_CHUNK_PROMPT)).firstChunkMs);
  }
  const turn = await turns.repetition();
  return { dsh, native, floor, single, dshFirst: median(dshFirst), nativeFirst: median(nativeFirst), turn };
}

/** The document's rows from the repetitions' figures. */
function rows(reps, captured) {
  const samples = (key) => reps.map((rep) => rep[key]);
  const types = new Map();
  for (const chunk of captured) types.set(chunk.type, (types.get(chunk.type) ?? 0) + 1);
  const composition = [...types].map(([type, n]) => `${n} ${type}`).join(', ');
  const stream = `one scripted stream of ${CHUNKS} one-character server chunks (the warm binding stream the floor replays: ${composition}), as server chunks per second`;
  const throughDshSide = { what: 'through ctx.llm.stream', unit: 'chunks/s', samples: samples('dsh') };
  const rustSide = { what: 'drained in Rust (benchDrain)', unit: 'chunks/s', samples: samples('native') };
  return [
    row({
      id: 'binding_throughput',
      title: 'chunks per second through the Node binding and ctx.llm.stream vs the same stream in Rust',
      measures: `${stream}, from calling ctx.llm.stream to the consumer's last chunk (DSH runtime, plugin, napi batches), vs from the Rust adapter's stream() to its last batch inside the addon (benchDrain)`,
      figure: throughDshSide,
      floor: rustSide,
      kind: 'ratio',
      goal: { op: '>=', value: 0.8 },
    }),
    row({
      id: 'binding_first_chunk',
      title: 'ms to the first chunk of a short text turn through ctx.llm.stream vs in Rust',
      measures: `a warm one-chunk text turn, from calling ctx.llm.stream to its first chunk in the consumer, vs from the Rust adapter's stream() to its first batch (benchDrain); each repetition takes the median of ${FIRST_CHUNK_TURNS} turns each way, alternated`,
      figure: { what: 'through ctx.llm.stream', unit: 'ms', samples: samples('dshFirst') },
      floor: { what: 'in Rust (benchDrain)', unit: 'ms', samples: samples('nativeFirst') },
      kind: 'difference',
      goal: { op: '<', value: 1 },
    }),
    row({
      id: 'dsh_runtime_throughput',
      title:
        "chunks per second through the Node binding vs DSH's own ceiling (a JS async generator adapter), both through ctx.llm.stream",
      measures: `${stream}, from calling ctx.llm.stream to the consumer's last chunk, served by the binding's adapter vs by a plain JS async generator adapter in the same host replaying one binding stream's chunk objects`,
      figure: throughDshSide,
      floor: { what: 'JS async generator adapter through ctx.llm.stream', unit: 'chunks/s', samples: samples('floor') },
      kind: 'ratio',
      goal: null,
    }),
    row({
      id: 'binding_one_chunk_per_call',
      title: 'chunks per second reading the binding one chunk per nextBatch(1) call vs the same stream in Rust',
      measures: `${stream}, from the native Provider's stream() to its last nextBatch(1) in JS (no DSH runtime), vs drained in Rust (benchDrain)`,
      figure: { what: 'binding, nextBatch(1) per chunk', unit: 'chunks/s', samples: samples('single') },
      floor: rustSide,
      kind: 'ratio',
      goal: null,
    }),
    ...turnRows(
      reps.map((rep) => rep.turn),
      row,
    ),
  ];
}

/** Each measurement's median [min, max] over the repetitions, for the console. */
function printMeasurements(reps) {
  const show = (key, digits) => {
    const {
      median: mid,
      min,
      max,
    } = spread(
      reps.map((rep) => rep[key]),
      digits,
    );
    return `${mid} [${min}, ${max}]`;
  };
  console.table({
    'through ctx.llm.stream (binding)': { 'chunks/s': show('dsh', 0), 'first chunk ms': show('dshFirst', 3) },
    'drained in Rust (benchDrain)': { 'chunks/s': show('native', 0), 'first chunk ms': show('nativeFirst', 3) },
    'JS async generator adapter (floor)': { 'chunks/s': show('floor', 0), 'first chunk ms': 'n/a' },
    'binding, one chunk per call': { 'chunks/s': show('single', 0), 'first chunk ms': 'n/a' },
  });
  const turn = (kind, side) => {
    const {
      median: mid,
      min,
      max,
    } = spread(
      reps.map((rep) => rep.turn[kind][side]),
      3,
    );
    return `${mid} [${min}, ${max}]`;
  };
  const kinds = { text: 'text turn', firstTool: 'first tool stream', round: 'tool round' };
  console.table(
    Object.fromEntries(
      Object.entries(kinds).map(([kind, name]) => [
        `${name} ms`,
        { 'through ctx.llm.stream': turn(kind, 0), 'in Rust (benchDrain)': turn(kind, 1), 'JS floor': turn(kind, 2) },
      ]),
    ),
  );
}

try {
  // Warm every path: each provider's no-tool lane keeps its process for the runs that
  // follow. The binding's warm stream is the one the floor replays.
  const captured = checked('warm-up', await throughDsh(STREAM_PROMPT, { capture: true })).captured;
  checked('warm-up in Rust', await inRust(STREAM_PROMPT), CHUNKS);
  await turns.warmUp();
  const replays = { stream: captured, ...turns.captured };
  const floorFiber = host.ctx.plugin(floorPlugin(replays, (options) => replayKey(options) ?? 'stream'));
  await floorFiber.await?.();
  await eventually(
    () => host.llm.listProviders().some((p) => p.id === FLOOR_PROVIDER),
    'the floor adapter registration',
  );
  checked('warm-up of the floor', await throughFloor(STREAM_PROMPT), CHUNKS);
  checked('warm-up one chunk per call', await oneByOne(STREAM_PROMPT), CHUNKS);
  checked('warm-up first chunk', await throughDsh(FIRST_CHUNK_PROMPT));
  checked('warm-up first chunk in Rust', await inRust(FIRST_CHUNK_PROMPT));

  const reps = [];
  for (let i = 0; i < RUNS; i++) reps.push(await repetition());
  const result = document({ tool: 'dsh-plugin bench', repetitions: RUNS, rows: rows(reps, captured) });

  console.log(
    `binding benchmark: ${CHUNKS} server chunks per stream (${captured.length} DSH chunks in the warm one), ${RUNS} interleaved repetitions, median [min, max], ${process.version}`,
  );
  printMeasurements(reps);
  printRows(result.rows);
  if (jsonOut) {
    writeFileSync(jsonOut, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`wrote ${jsonOut}`);
  }
} finally {
  await rust.dispose();
  await host.stop();
  fake.remove();
}
