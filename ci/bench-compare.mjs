/**
 * `ci/bench-compare.sh OLD.json NEW.json`'s work: reads two benchmark documents
 * (`antigravity-acp-bench/1`, from `dsh-sim bench --json` or
 * `dsh-plugin/bench/binding-overhead.mjs --json`), matches their rows by `id`, and prints
 * one line per row: old median, new median, the change, and a verdict.
 *
 * Verdicts, for a row in both documents:
 * - `reported`: the row has no goal; never flagged.
 * - `WORSE`: same `value.kind`, and the new spread lies wholly on the worse side of the old
 *   one (goal `<=`/`<`: new.min > old.max; goal `>=`/`>`: new.max < old.min). Flagged.
 * - `better`: the mirror of that. `within noise`: the spreads overlap.
 * - `not comparable`: the kinds differ (no spread rule applies).
 * - A row whose `met` went from true to false says so; it is flagged only when it is also
 *   worse by more than the noise (or its kinds differ): a borderline ratio whose median
 *   crosses its goal within the old spread is noise, and would fail every other night.
 * Rows in one document only are listed as `added` or `removed`, never flagged.
 *
 * Exit status: 1 if any row is flagged, 0 if none, 2 for a wrong command line or an
 * unreadable document (missing, not JSON, another schema, malformed rows), naming the file
 * and what is wrong. Node builtins only.
 * @module ci/bench-compare
 */
import { readFileSync } from 'node:fs';

const SCHEMA = 'antigravity-acp-bench/1';
const KINDS = ['ratio', 'difference', 'figure'];
const OPS = ['<=', '<', '>=', '>'];

/** A document that cannot be compared: exit 2 with `file: problem`. */
class Unreadable extends Error {}

const isNumber = (value) => typeof value === 'number' && Number.isFinite(value);

/** The problem with one row, or undefined when it is well formed. */
function rowProblem(row, index) {
  if (row === null || typeof row !== 'object') return `rows[${index}] is not an object`;
  if (typeof row.id !== 'string' || row.id === '') return `rows[${index}] has no string id`;
  const { value, goal } = row;
  if (value === null || typeof value !== 'object') return `row ${row.id} has no value`;
  if (!KINDS.includes(value.kind))
    return `row ${row.id}: value.kind ${JSON.stringify(value.kind)} is not one of ${KINDS.join(', ')}`;
  for (const key of ['median', 'min', 'max']) {
    if (!isNumber(value[key])) return `row ${row.id}: value.${key} is not a number`;
  }
  if (goal !== null && goal !== undefined) {
    if (!OPS.includes(goal.op))
      return `row ${row.id}: goal.op ${JSON.stringify(goal.op)} is not one of ${OPS.join(', ')}`;
    if (!isNumber(goal.value)) return `row ${row.id}: goal.value is not a number`;
  }
  if (row.met !== null && row.met !== undefined && typeof row.met !== 'boolean')
    return `row ${row.id}: met is neither true, false nor null`;
  return undefined;
}

/**
 * Read and check one document.
 * @param {string} file
 * @returns {{tool: string, date: string, rows: Map<string, any>}}
 * @throws {Unreadable}
 */
function load(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Unreadable(`${file}: cannot read it (${error.code ?? error.message})`);
  }
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new Unreadable(`${file}: not JSON (${error.message})`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Unreadable(`${file}: not a JSON object`);
  if (doc.schema !== SCHEMA) {
    throw new Unreadable(`${file}: schema is ${JSON.stringify(doc.schema ?? null)}, not "${SCHEMA}"`);
  }
  if (!Array.isArray(doc.rows)) throw new Unreadable(`${file}: "rows" is not an array`);
  const rows = new Map();
  doc.rows.forEach((row, index) => {
    const problem = rowProblem(row, index);
    if (problem) throw new Unreadable(`${file}: ${problem}`);
    if (rows.has(row.id)) throw new Unreadable(`${file}: row ${row.id} appears twice`);
    rows.set(row.id, row);
  });
  return { tool: String(doc.tool ?? '?'), date: String(doc.date ?? '?'), rows };
}

const lowerIsBetter = (goal) => goal.op === '<=' || goal.op === '<';

/**
 * The verdict for a row in both documents.
 * @returns {{verdict: string, flagged: boolean}}
 */
function judge(old, now) {
  const goal = now.goal ?? null;
  const metLost = old.met === true && now.met === false;
  let verdict;
  let worse = false;
  if (goal === null) verdict = 'reported';
  else if (old.value.kind !== now.value.kind) verdict = `not comparable (${old.value.kind} -> ${now.value.kind})`;
  else {
    const [a, b] = [old.value, now.value];
    const lower = lowerIsBetter(goal);
    worse = lower ? b.min > a.max : b.max < a.min;
    const better = lower ? b.max < a.min : b.min > a.max;
    verdict = worse ? 'WORSE' : better ? 'better' : 'within noise';
  }
  if (goal === null) return { verdict, flagged: false };
  const comparable = old.value.kind === now.value.kind;
  if (metLost)
    verdict = worse
      ? 'WORSE, goal no longer met'
      : comparable
        ? `goal no longer met (${verdict})`
        : `WORSE: goal no longer met (${verdict})`;
  return { verdict, flagged: worse || (metLost && !comparable) };
}

/** The change from `a` to `b`: the difference, and the relative change when `a` is not 0. */
function change(a, b) {
  const digits = (n) => (Math.abs(n) >= 100 ? 0 : 3);
  const delta = b - a;
  const sign = delta > 0 ? '+' : '';
  const absolute = `${sign}${delta.toFixed(digits(delta))}`;
  if (a === 0) return absolute;
  const percent = (delta / Math.abs(a)) * 100;
  return `${absolute} (${percent > 0 ? '+' : ''}${percent.toFixed(1)}%)`;
}

const medianText = (row) => `${Number(row.value.median.toPrecision(4))}${row.value.unit ? ` ${row.value.unit}` : ''}`;

/**
 * Compare two loaded documents.
 * @returns {{lines: string[][], flagged: string[]}} table cells per row, flagged ids.
 */
function compare(old, now) {
  const lines = [];
  const flagged = [];
  for (const [id, before] of old.rows) {
    const after = now.rows.get(id);
    if (!after) {
      lines.push([id, medianText(before), '-', '', 'removed (only in OLD)']);
      continue;
    }
    const { verdict, flagged: isFlagged } = judge(before, after);
    if (isFlagged) flagged.push(id);
    const delta = before.value.kind === after.value.kind ? change(before.value.median, after.value.median) : '';
    lines.push([id, medianText(before), medianText(after), delta, verdict]);
  }
  for (const [id, after] of now.rows) {
    if (!old.rows.has(id)) lines.push([id, '-', medianText(after), '', 'added (only in NEW)']);
  }
  return { lines, flagged };
}

/** The cells as aligned columns under a header. */
function table(lines) {
  const rows = [['row', 'old median', 'new median', 'change', 'verdict'], ...lines];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((cells) => cells[column].length)));
  return rows.map((cells) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd(),
  );
}

function main(args) {
  if (args.length !== 2) {
    console.error('usage: ci/bench-compare.sh OLD.json NEW.json');
    return 2;
  }
  const [oldFile, newFile] = args;
  let old;
  let now;
  try {
    old = load(oldFile);
    now = load(newFile);
  } catch (error) {
    if (!(error instanceof Unreadable)) throw error;
    console.error(`bench-compare: ${error.message}`);
    return 2;
  }
  console.log(`old: ${oldFile} (${old.tool}, ${old.date})`);
  console.log(`new: ${newFile} (${now.tool}, ${now.date})`);
  const { lines, flagged } = compare(old, now);
  for (const line of table(lines)) console.log(line);
  if (flagged.length > 0) {
    console.log(
      `${flagged.length} row(s) worse by more than the noise or no longer meeting their goal: ${flagged.join(', ')}`,
    );
    return 1;
  }
  console.log('no row worse by more than the noise');
  return 0;
}

process.exitCode = main(process.argv.slice(2));
