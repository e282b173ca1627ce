// The DSH hosts the plugin supports (support/dsh-versions.mjs) against what decides whether
// a host loads it: DSH's app boot (since 0.1.7-rc.2) checks each `@deepseek-ai/dsh*` peer
// range of a plugin with `semver.satisfies(hostVersion, range, {includePrerelease: true})`
// and skips the whole bundle when one misses, so a range that drops a supported host
// fails here, not silently in a user's DSH. The README's table, the doctor's range
// (adapter/src/user_commands/host.rs) and the pinned host folders are held to the same table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { CHECKED_PEER, pairs, readmeTable, SUPPORTED_HOSTS, UNSUPPORTED_HOSTS } from '../support/dsh-versions.mjs';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const repo = join(pkg, '..');
const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
const checked = Object.entries(manifest.peerDependencies).filter(([name]) => CHECKED_PEER.test(name));

/**
 * DSH's plugin check, as DSH documents it: every `@deepseek-ai/dsh*` peer range must take
 * the host's version, pre-releases included.
 * @param {string} host - the host's version.
 * @returns {string[]} the peers whose range misses it.
 */
const misses = (host) =>
  checked.filter(([, range]) => !semver.satisfies(host, range, { includePrerelease: true })).map(([name]) => name);

test('DSH checks at least the dsh-llm peer', () => {
  assert.ok(
    checked.some(([name]) => name === '@deepseek-ai/dsh-llm'),
    JSON.stringify(manifest.peerDependencies),
  );
});

test("every supported host passes DSH's plugin check", () => {
  for (const { host } of SUPPORTED_HOSTS) {
    assert.ok(semver.valid(host), `${host} is a version`);
    assert.deepEqual(misses(host), [], `host ${host} would skip the plugin`);
  }
});

test("no host the project does not support passes DSH's plugin check", () => {
  for (const host of UNSUPPORTED_HOSTS) {
    assert.notDeepEqual(misses(host), [], `host ${host} would load the plugin`);
  }
});

test('the README\'s "Supported DSH versions" table is the source table', () => {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const section = readme.match(/^## Supported DSH versions\n([\s\S]*?)(?=^## )/m);
  assert.ok(section, 'README.md has the section');
  const rows = section[1].split('\n').filter((line) => line.startsWith('|'));
  assert.deepEqual(rows, readmeTable());
  const range = manifest.peerDependencies['@deepseek-ai/dsh-llm'];
  assert.ok(section[1].includes(`\`${range}\``), `the section names the peer range ${range}`);
});

test('the doctor judges dsh-llm by the same range (adapter/src/user_commands/host.rs)', () => {
  const rust = readFileSync(join(repo, 'adapter', 'src', 'user_commands', 'host.rs'), 'utf8');
  const range = rust.match(/^pub const DSH_RANGE: &str = "([^"]+)";$/m);
  assert.ok(range, 'host.rs declares DSH_RANGE');
  assert.equal(range[1], manifest.peerDependencies['@deepseek-ai/dsh-llm']);
});

test('each host CI runs on pins its dsh-llm in a lock file', () => {
  const run = SUPPORTED_HOSTS.filter((row) => row.ci !== null);
  assert.deepEqual(
    run.map((row) => row.ci),
    ['dsh-plugin', 'ci/dsh-llm-0.1.1'],
  );
  for (const { ci, dshLlm } of run) {
    const lock = JSON.parse(readFileSync(join(repo, ci ?? '', 'package-lock.json'), 'utf8'));
    assert.equal(lock.packages['node_modules/@deepseek-ai/dsh-llm']?.version, dshLlm, `${ci}/package-lock.json`);
  }
});

test('.ci/run runs every Node and every dsh-llm at least once; the full matrix runs every pair', () => {
  const nodes = ['22', '24'];
  const hosts = SUPPORTED_HOSTS.filter((row) => row.ci).map((row) => row.dshLlm);
  const some = pairs(nodes, hosts, false);
  assert.deepEqual(some, [
    ['22', '0.1.0-rc.8'],
    ['24', '0.1.1-rc.2'],
  ]);
  assert.deepEqual(new Set(some.map(([node]) => node)), new Set(nodes));
  assert.deepEqual(new Set(some.map(([, host]) => host)), new Set(hosts));
  assert.equal(pairs(nodes, hosts, true).length, nodes.length * hosts.length);
  assert.deepEqual(pairs(['22', '24'], ['a', 'b', 'c'], false), [
    ['22', 'a'],
    ['24', 'b'],
    ['22', 'c'],
  ]);
});
