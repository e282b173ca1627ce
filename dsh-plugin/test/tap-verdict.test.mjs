// scripts/tap-verdict.mjs, the judge of every `node --test` run (scripts/test.mjs and the
// Windows leg): a skip listed in test/expected-skips.txt with its reason is expected; an
// unlisted skip, or a listed test skipping for another reason, is unexpected and fails the
// run under CI only; a failure, a cancelled test, or a run with no test at all always fails;
// a listed skip that skipped in every run is named (scripts/test.mjs fails on it under CI).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expectedSkips, fails, neverRan, readTap } from '../scripts/tap-verdict.mjs';

const expected = new Map([['needs hooks', 'a release addon has no test hooks']]);
const tap = (lines, { pass = 1, fail = 0, cancelled = 0, skipped = 0 } = {}) =>
  [
    'TAP version 13',
    ...lines,
    `# pass ${pass}`,
    `# fail ${fail}`,
    `# cancelled ${cancelled}`,
    `# skipped ${skipped}`,
  ].join('\n');

test('a listed skip with its reason is expected, and counted', () => {
  const verdict = readTap(
    tap(['ok 1 - runs', 'ok 2 - needs hooks # SKIP a release addon has no test hooks'], { skipped: 1 }),
    expected,
  );
  assert.deepEqual(verdict, {
    passed: 1,
    failed: 0,
    skipped: 1,
    unexpected: [],
    skippedNames: ['needs hooks'],
    passedNames: ['runs'],
  });
  assert.equal(fails(verdict, true), false);
});

test('an unlisted skip, or a listed one with another reason, fails under CI only', () => {
  const verdict = readTap(
    tap(
      ['ok 1 - runs', '    ok 1 - packs # SKIP no addon in npm/linux-x64-gnu', 'ok 2 - needs hooks # SKIP no addon'],
      { skipped: 2 },
    ),
    expected,
  );
  assert.deepEqual(verdict.unexpected, ['packs (no addon in npm/linux-x64-gnu)', 'needs hooks (no addon)']);
  assert.equal(fails(verdict, true), true);
  assert.equal(fails(verdict, false), false);
});

test('a failure, a cancelled test or a run of no test fails, CI or not', () => {
  assert.equal(fails(readTap(tap(['not ok 1 - broken'], { pass: 0, fail: 1 }), expected), false), true);
  assert.equal(fails(readTap(tap([], { pass: 1, cancelled: 1 }), expected), false), true);
  assert.equal(fails(readTap('', expected), false), true);
});

test('the committed list parses: every line names a test and gives a reason', () => {
  const list = expectedSkips();
  assert.ok(list.size > 0);
  for (const [name, reason] of list) assert.ok(name.length > 0 && reason.length > 0, `${name} # ${reason}`);
});

test('a listed skip must still run somewhere: one that skipped in every run is named', () => {
  const expected = new Map([['needs 0.1.1', 'old dsh-llm']]);
  const skippedHere = readTap('ok 1 - needs 0.1.1 # SKIP old dsh-llm\nok 2 - other\n# pass 1\n', expected);
  const ranThere = readTap('ok 1 - needs 0.1.1\nok 2 - other\n# pass 2\n', expected);
  assert.deepEqual(skippedHere.skippedNames, ['needs 0.1.1']);
  assert.deepEqual(ranThere.passedNames, ['needs 0.1.1', 'other']);
  assert.deepEqual(neverRan([skippedHere, ranThere]), [], 'it ran on the other run');
  assert.deepEqual(neverRan([skippedHere, skippedHere]), ['needs 0.1.1'], 'it never ran');
});
