// `ci/bench-compare.sh OLD.json NEW.json`, run as a subprocess (on this test's Node) over
// fixture documents written to a temp dir: a row with a goal is flagged WORSE (exit 1)
// only when its new spread lies wholly on the worse side of its old one, in the direction
// its goal op says; overlapping spreads are within noise; a goal-less row is only reported;
// a goal lost is flagged only beyond the noise; rows in one document only are listed,
// not flagged; another schema or an unreadable file exits 2 naming the file. The last test
// feeds it documents built by the bench's own writer (`bench/report.mjs`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { document, row as benchRow } from '../bench/report.mjs';

const script = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'ci', 'bench-compare.sh');
const scratch = mkdtempSync(join(tmpdir(), 'agy-bench-compare-'));
test.after(() => rmSync(scratch, { recursive: true, force: true }));

/** A document of `rows` (another `schema` when given). */
const doc = (rows, schema = 'antigravity-acp-bench/1') => ({
  schema,
  tool: 'fixture',
  date: '2026-12-02T08:00:00.000Z',
  machine: { cpus: 2, cpu_model: 'fixture', kernel: '6.x', node: process.version },
  repetitions: 5,
  rows,
});

/** A row with value spread `[min, median, max]`, a goal (or null) and `met`. */
function row(id, [min, median, max], { kind = 'ratio', goal = { op: '>=', value: 0.8 }, met } = {}) {
  const value = { kind, unit: kind === 'ratio' ? '' : 'ms', median, min, max, values: [min, median, max] };
  const reached = goal === null ? null : (met ?? null);
  return {
    id,
    title: id,
    measures: id,
    figure: { what: 'f', unit: 'u', median, min, max },
    floor: null,
    value,
    goal,
    met: reached,
  };
}

let files = 0;
/** Write `content` (an object as JSON, or raw text) to a fresh file; its path. */
function write(content) {
  const file = join(scratch, `doc-${files++}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** Run the script on two documents: its status and output. */
function compare(oldDoc, newDoc) {
  const [oldFile, newFile] = [oldDoc, newDoc].map((d) => (typeof d === 'string' && d.startsWith('/') ? d : write(d)));
  const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}` };
  const run = spawnSync('bash', [script, oldFile, newFile], { encoding: 'utf8', env });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, oldFile, newFile };
}

/** The output line of row `id`. */
const line = (stdout, id) =>
  stdout.split('\n').find((l) => l.startsWith(`${id} `)) ?? assert.fail(`no line for ${id} in:\n${stdout}`);

const LOWER = { op: '<', value: 1 };

test('lower is better: a new spread wholly above the old one is WORSE, exit 1', () => {
  const run = compare(
    doc([row('first_chunk', [0.2, 0.3, 0.4], { kind: 'difference', goal: LOWER, met: true })]),
    doc([row('first_chunk', [0.45, 0.5, 0.6], { kind: 'difference', goal: LOWER, met: true })]),
  );
  assert.equal(run.status, 1, run.stdout + run.stderr);
  assert.match(line(run.stdout, 'first_chunk'), /0\.3 ms\s+0\.5 ms\s+\+0\.200 \(\+66\.7%\)\s+WORSE$/);
});

test('overlapping spreads are within noise, exit 0, even when the median moved the worse way', () => {
  const run = compare(
    doc([
      row('first_chunk', [0.2, 0.3, 0.4], { kind: 'difference', goal: LOWER, met: true }),
      row('throughput', [0.8, 0.9, 1.0], { met: true }),
    ]),
    doc([
      row('first_chunk', [0.35, 0.5, 0.6], { kind: 'difference', goal: LOWER, met: true }),
      row('throughput', [0.6, 0.82, 0.85], { met: true }),
    ]),
  );
  assert.equal(run.status, 0, run.stdout + run.stderr);
  assert.match(line(run.stdout, 'first_chunk'), /within noise$/);
  assert.match(line(run.stdout, 'throughput'), /within noise$/);
});

test('higher is better (>=): below the old spread is WORSE, above it is better, and the same moves mirror for <=', () => {
  const higher = compare(
    doc([row('fell', [0.9, 0.95, 1.0], { met: true }), row('rose', [0.9, 0.95, 1.0], { met: true })]),
    doc([row('fell', [0.82, 0.85, 0.89], { met: true }), row('rose', [1.01, 1.1, 1.2], { met: true })]),
  );
  assert.equal(higher.status, 1, higher.stdout + higher.stderr);
  assert.match(line(higher.stdout, 'fell'), /WORSE$/);
  assert.match(line(higher.stdout, 'rose'), /better$/);

  const atMost = { op: '<=', value: 2 };
  const lower = compare(
    doc([row('rose', [0.9, 0.95, 1.0], { goal: atMost, met: true })]),
    doc([row('rose', [1.01, 1.1, 1.2], { goal: atMost, met: true })]),
  );
  assert.equal(lower.status, 1, lower.stdout + lower.stderr);
  assert.match(line(lower.stdout, 'rose'), /WORSE$/);

  const fellUnderAtMost = compare(
    doc([row('fell', [0.9, 0.95, 1.0], { goal: atMost, met: true })]),
    doc([row('fell', [0.5, 0.6, 0.7], { goal: atMost, met: true })]),
  );
  assert.equal(fellUnderAtMost.status, 0, fellUnderAtMost.stdout + fellUnderAtMost.stderr);
  assert.match(line(fellUnderAtMost.stdout, 'fell'), /better$/);
});

test('a row without a goal is reported and never flagged, however far it moved', () => {
  const run = compare(
    doc([row('ceiling', [0.5, 0.6, 0.7], { goal: null })]),
    doc([row('ceiling', [0.01, 0.02, 0.03], { goal: null })]),
  );
  assert.equal(run.status, 0, run.stdout + run.stderr);
  assert.match(line(run.stdout, 'ceiling'), /reported$/);
  assert.doesNotMatch(run.stdout, /WORSE/);
});

test('a goal lost within the noise is reported, and flagged only beyond it', () => {
  const run = compare(
    doc([row('throughput', [0.78, 0.81, 0.9], { met: true })]),
    doc([row('throughput', [0.7, 0.79, 0.85], { met: false })]),
  );
  assert.equal(run.status, 0, run.stdout + run.stderr);
  assert.match(line(run.stdout, 'throughput'), /goal no longer met \(within noise\)$/);
  assert.doesNotMatch(line(run.stdout, 'throughput'), /WORSE/);

  const beyond = compare(
    doc([row('throughput', [0.8, 0.81, 0.9], { met: true })]),
    doc([row('throughput', [0.6, 0.7, 0.75], { met: false })]),
  );
  assert.equal(beyond.status, 1, beyond.stdout + beyond.stderr);
  assert.match(line(beyond.stdout, 'throughput'), /WORSE, goal no longer met$/);

  const stillUnmet = compare(
    doc([row('throughput', [0.7, 0.75, 0.9], { met: false })]),
    doc([row('throughput', [0.7, 0.76, 0.85], { met: false })]),
  );
  assert.equal(stillUnmet.status, 0, stillUnmet.stdout + stillUnmet.stderr);
});

test('rows in one document only are listed as removed or added, not flagged; different kinds are not compared', () => {
  const run = compare(
    doc([row('gone', [1, 2, 3], { met: true }), row('changed', [0.9, 0.95, 1], { met: true })]),
    doc([row('changed', [0.1, 0.2, 0.3], { kind: 'difference', met: true }), row('new', [1, 2, 3], { met: false })]),
  );
  assert.equal(run.status, 0, run.stdout + run.stderr);
  assert.match(line(run.stdout, 'gone'), /removed \(only in OLD\)$/);
  assert.match(line(run.stdout, 'new'), /added \(only in NEW\)$/);
  assert.match(line(run.stdout, 'changed'), /not comparable \(ratio -> difference\)$/);
});

test('another schema, a file that is not JSON, or a missing file exits 2 naming the file and the problem', () => {
  const good = doc([row('throughput', [0.8, 0.9, 1], { met: true })]);
  const schema = compare(good, doc(good.rows, 'antigravity-acp-bench/2'));
  assert.equal(schema.status, 2, schema.stdout + schema.stderr);
  assert.ok(schema.stderr.includes(schema.newFile), schema.stderr);
  assert.match(schema.stderr, /schema is "antigravity-acp-bench\/2", not "antigravity-acp-bench\/1"/);

  const noSchema = compare({ rows: [] }, good);
  assert.equal(noSchema.status, 2);
  assert.ok(noSchema.stderr.includes(noSchema.oldFile), noSchema.stderr);
  assert.match(noSchema.stderr, /schema is null/);

  const notJson = compare('{"schema": ', good);
  assert.equal(notJson.status, 2);
  assert.ok(notJson.stderr.includes(notJson.oldFile), notJson.stderr);
  assert.match(notJson.stderr, /not JSON/);

  const missing = join(scratch, 'no-such.json');
  const absent = compare(good, missing);
  assert.equal(absent.status, 2);
  assert.match(absent.stderr, new RegExp(`${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: cannot read it`));

  const malformed = compare(good, doc([{ id: 'throughput', value: { kind: 'speed', median: 1, min: 1, max: 1 } }]));
  assert.equal(malformed.status, 2);
  assert.match(malformed.stderr, /row throughput: value\.kind "speed"/);
});

test("documents from the bench's own writer (bench/report.mjs) compare: itself within noise, a slower run WORSE", () => {
  const make = (dsh, rust) =>
    document({
      tool: 'dsh-plugin bench',
      repetitions: dsh.length,
      rows: [
        benchRow({
          id: 'binding_throughput',
          title: 't',
          measures: 'm',
          figure: { what: 'through ctx.llm.stream', unit: 'chunks/s', samples: dsh },
          floor: { what: 'drained in Rust', unit: 'chunks/s', samples: rust },
          kind: 'ratio',
          goal: { op: '>=', value: 0.8 },
        }),
      ],
    });
  const before = make([90_000, 95_000, 100_000], [100_000, 100_000, 100_000]);
  assert.deepEqual(before.rows[0].value, {
    kind: 'ratio',
    unit: '',
    median: 0.95,
    min: 0.9,
    max: 1,
    values: [0.9, 0.95, 1],
  });
  assert.equal(before.rows[0].met, true);
  const same = compare(before, before);
  assert.equal(same.status, 0, same.stdout + same.stderr);
  assert.match(line(same.stdout, 'binding_throughput'), /within noise$/);

  const slower = compare(before, make([60_000, 70_000, 75_000], [100_000, 100_000, 100_000]));
  assert.equal(slower.status, 1, slower.stdout + slower.stderr);
  assert.match(line(slower.stdout, 'binding_throughput'), /WORSE, goal no longer met$/);
});
