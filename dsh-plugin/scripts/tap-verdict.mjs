/**
 * The verdict on a `node --test` TAP file: its passes, failures and skips, and the skips
 * that were not expected. `test/expected-skips.txt` lists the tests that may skip, each
 * with the reason its skip gives; under CI (`CI=true`) any other skip fails the run, so a
 * test that did not run never reads as green. `scripts/test.mjs` uses it for each Node it
 * runs on; `ci/cross.sh wine-node` runs it as a command on the TAP file that the Windows
 * Node wrote:
 *
 *   node scripts/tap-verdict.mjs LABEL FILE.tap   # prints the summary; exit 1 on a failure
 *                                                # or (under CI) an unexpected skip
 * @module scripts/tap-verdict
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The expected skips: test name → the reason its skip gives.
 * @param {string} [file] - the list (`test/expected-skips.txt`).
 * @returns {Map<string, string>}
 */
export function expectedSkips(file = join(pkg, 'test', 'expected-skips.txt')) {
  const expected = new Map();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' # ');
    if (at === -1) throw new Error(`${file}: "${line}" gives no reason (NAME # REASON)`);
    expected.set(line.slice(0, at).trim(), line.slice(at + 3).trim());
  }
  return expected;
}

/**
 * Reads a TAP report.
 * @param {string} text - what `--test-reporter=tap` wrote.
 * @param {Map<string, string>} expected - `expectedSkips()`.
 * @returns {{passed: number, failed: number, skipped: number, unexpected: string[],
 *   skippedNames: string[], passedNames: string[]}} the summary's counts (cancelled tests
 *   count as failed), each skip the list does not expect, as `name (reason)`, and the names
 *   of the tests that skipped and that passed.
 */
export function readTap(text, expected) {
  const count = (name) => Number(text.match(new RegExp(`^# ${name} (\\d+)$`, 'm'))?.[1] ?? 0);
  const unexpected = [];
  const skippedNames = [];
  for (const [, name, reason = ''] of text.matchAll(/^\s*ok \d+ - (.*?) # SKIP ?(.*)$/gm)) {
    skippedNames.push(name);
    if (expected.get(name) !== reason.trim()) unexpected.push(`${name} (${reason.trim() || 'no reason'})`);
  }
  const passedNames = [...text.matchAll(/^\s*ok \d+ - (.*)$/gm)]
    .map(([, name]) => name)
    .filter((name) => !name.includes(' # SKIP'));
  return {
    passed: count('pass'),
    failed: count('fail') + count('cancelled'),
    skipped: count('skipped'),
    unexpected,
    skippedNames,
    passedNames,
  };
}

/**
 * The listed tests that skipped in every run that met them: a skip the list allows must
 * still run somewhere (on another Node or another dsh-llm), or its proof never runs.
 * @param {Array<{skippedNames: string[], passedNames: string[]}>} runs - `readTap` of each run.
 * @returns {string[]} their names.
 */
export function neverRan(runs) {
  const passed = new Set(runs.flatMap((run) => run.passedNames));
  return [...new Set(runs.flatMap((run) => run.skippedNames))].filter((name) => !passed.has(name));
}

/**
 * Whether a run read this way fails: a failure, no test at all, or (under CI) a skip
 * the list does not expect.
 * @param {{passed: number, failed: number, unexpected: string[]}} verdict
 * @param {boolean} ci - `CI=true`.
 * @returns {boolean}
 */
export function fails(verdict, ci) {
  return verdict.failed > 0 || verdict.passed === 0 || (ci && verdict.unexpected.length > 0);
}

/** Whether this process runs under CI. */
export const underCi = () => process.env.CI === 'true' || process.env.CI === '1';

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [label, file] = process.argv.slice(2);
  if (!label || !file) {
    console.error('usage: node scripts/tap-verdict.mjs LABEL FILE.tap');
    process.exit(2);
  }
  const verdict = readTap(readFileSync(file, 'utf8'), expectedSkips());
  for (const skip of verdict.unexpected) console.error(`unexpected skip: ${skip}`);
  console.log(`${label}: ${verdict.passed} passed, ${verdict.failed} failed, ${verdict.skipped} skipped`);
  process.exit(fails(verdict, underCi()) ? 1 : 0);
}
