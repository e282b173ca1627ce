/**
 * The benchmark document (`antigravity-acp-bench/1`, shared with `dsh-sim bench --json`
 * and read by `ci/bench-compare.sh`): the machine block, one row per figure from its
 * per-repetition samples (median, min, max; the row's value computed per repetition),
 * whether the value's median meets the row's goal, and the console table of the rows.
 * @module bench/report
 */
import { cpus, release } from 'node:os';

export const SCHEMA = 'antigravity-acp-bench/1';

/** The median of `values` (the mean of the two middle ones for an even count). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** `value` rounded to `digits` decimals. */
const round = (value, digits) => Number(value.toFixed(digits));

/** `{median, min, max}` of `values`, rounded to `digits` decimals. */
export function spread(values, digits) {
  return {
    median: round(median(values), digits),
    min: round(Math.min(...values), digits),
    max: round(Math.max(...values), digits),
  };
}

/** Digits kept per unit: whole chunks per second, microseconds in ms, ratios to 3 decimals. */
const DIGITS = { 'chunks/s': 0, ms: 3, '': 3 };

/** Whether `median` meets `goal` (`null` for a row without one). */
export function meets(goal, median) {
  if (goal === null) return null;
  switch (goal.op) {
    case '<=':
      return median <= goal.value;
    case '<':
      return median < goal.value;
    case '>=':
      return median >= goal.value;
    case '>':
      return median > goal.value;
    default:
      throw new Error(`unknown goal op ${goal.op}`);
  }
}

/**
 * One row. `figure.samples` and `floor.samples` hold one measurement per repetition, in
 * repetition order; the value is computed per repetition from the pair.
 * @param {object} row
 * @param {string} row.id
 * @param {string} row.title
 * @param {string} row.measures - what is timed, from where to where.
 * @param {{what: string, unit: string, samples: number[]}} row.figure
 * @param {{what: string, unit: string, samples: number[]} | null} row.floor
 * @param {'ratio' | 'difference' | 'figure'} row.kind
 * @param {{op: '<=' | '<' | '>=' | '>', value: number} | null} row.goal
 */
export function row({ id, title, measures, figure, floor, kind, goal }) {
  const perRepetition = figure.samples.map((sample, i) => {
    if (kind === 'ratio') return sample / floor.samples[i];
    if (kind === 'difference') return sample - floor.samples[i];
    return sample;
  });
  const unit = kind === 'ratio' ? '' : figure.unit;
  const digits = DIGITS[unit] ?? 3;
  const value = { kind, unit, ...spread(perRepetition, digits), values: perRepetition.map((v) => round(v, digits)) };
  const side = ({ what, unit: sideUnit, samples }) => ({
    what,
    unit: sideUnit,
    ...spread(samples, DIGITS[sideUnit] ?? 3),
  });
  return {
    id,
    title,
    measures,
    figure: side(figure),
    floor: floor === null ? null : side(floor),
    value,
    goal,
    met: meets(goal, value.median),
  };
}

/** The whole document. */
export function document({ tool, repetitions, rows }) {
  const cpu = cpus();
  return {
    schema: SCHEMA,
    tool,
    date: new Date().toISOString(),
    machine: { cpus: cpu.length, cpu_model: cpu[0]?.model ?? 'unknown', kernel: release(), node: process.version },
    repetitions,
    rows,
  };
}

/** The rows as a console table: value median [min, max], goal, met. */
export function printRows(rows) {
  const table = {};
  for (const { id, figure, floor, value, goal, met } of rows) {
    const unit = value.unit ? ` ${value.unit}` : '';
    table[id] = {
      figure: `${figure.median} ${figure.unit}`,
      floor: floor === null ? '-' : `${floor.median} ${floor.unit}`,
      kind: value.kind,
      value: `${value.median}${unit} [${value.min}, ${value.max}]`,
      goal: goal === null ? 'reported' : `${goal.op} ${goal.value}${unit}`,
      met: met === null ? '-' : met,
    };
  }
  console.table(table);
}
