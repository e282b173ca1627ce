// What a release reads from the repository: one version (the workspace's Cargo.toml) copied
// to every crate and package by `ci/version.mjs`, one `engines` in every package, a
// platform package for every target the loader knows, the Apache-2.0 licence, and a
// changelog whose sections the release's notes come from. `set` is run on a copy of the
// files it edits (VERSION_ROOT), so the checkout is never changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PLATFORMS, TARGETS, packageName } from '../lib/binding-platform.js';
import {
  changelogSection,
  copies,
  disagreements,
  openRelease,
  platformManifests,
  sourceVersion,
} from '../../ci/version.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SCRIPT = join(root, 'ci', 'version.mjs');
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

test('every copy of the version and of engines agrees with the workspace Cargo.toml', () => {
  assert.deepEqual(disagreements(), []);
  assert.match(sourceVersion(), /^\d+\.\d+\.\d+/);
  // The copies cover every platform package three times (version, engines, the main
  // package's optional dependency) and every workspace crate's lock entry.
  const places = copies(sourceVersion()).map(([where]) => where);
  for (const tag of PLATFORMS) {
    assert.ok(
      places.some((where) => where.includes(`npm/${tag}/package.json version`)),
      tag,
    );
    assert.ok(
      places.some((where) => where.endsWith(`optionalDependencies.${packageName(tag)}`)),
      tag,
    );
  }
  assert.ok(places.includes('Cargo.lock antigravity-acp-dsh'));
});

test('a platform package exists for every target the loader knows, and says which it is', () => {
  const manifests = platformManifests().map(readJson);
  assert.deepEqual(manifests.map((pkg) => pkg.name).sort(), PLATFORMS.map(packageName).sort());
  for (const tag of PLATFORMS) {
    const pkg = manifests.find((candidate) => candidate.name === packageName(tag));
    const target = TARGETS[tag];
    assert.deepEqual(pkg.os, [target.os], `${tag} os`);
    assert.deepEqual(pkg.cpu, [target.cpu], `${tag} cpu`);
    assert.deepEqual(pkg.libc, target.libc ? [target.libc] : undefined, `${tag} libc`);
    assert.equal(pkg.license, 'Apache-2.0', `${tag} licence`);
  }
  const main = readJson(join(root, 'dsh-plugin', 'package.json'));
  assert.equal(main.license, 'Apache-2.0');
  assert.equal(main.napi, undefined, 'no napi block: nothing reads it');
  // npm skips a platform package whose engines the installing Node misses: the loader's
  // error says which Node, in the engines' own words.
  const loader = readFileSync(join(root, 'dsh-plugin', 'lib', 'binding.js'), 'utf8');
  assert.ok(loader.includes(main.engines.node), `binding.js names the engines ${main.engines.node}`);
});

test('the licence is the Apache-2.0 text, and the crates declare it', () => {
  const licence = readFileSync(join(root, 'LICENSE'), 'utf8');
  assert.match(licence, /^\s+Apache License\n\s+Version 2\.0, January 2004\n/);
  assert.match(licence, /END OF TERMS AND CONDITIONS/);
  assert.match(readFileSync(join(root, 'Cargo.toml'), 'utf8'), /\nlicense = "Apache-2\.0"\n/);
});

test('the changelog keeps an Unreleased section, and a section is read up to the next one', () => {
  const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
  assert.match(changelog, /\n## \[Unreleased\]\n/);
  assert.ok(changelogSection('Unreleased', changelog)?.includes('### '), 'Unreleased has entries');
  const text =
    '# Changelog\n\n## [Unreleased]\n\n## [1.2.0] - 2026-12-07\n\n### Added\n\n- x\n\n## [1.1.0] - 2026-11-01\n\n- y\n\n[1.2.0]: https://example.invalid/1.2.0\n';
  assert.equal(changelogSection('1.2.0', text), '### Added\n\n- x');
  assert.equal(changelogSection('1.1.0', text), '- y');
  assert.equal(changelogSection('1.3.0', text), undefined);
  const opened = openRelease('# C\n\n## [Unreleased]\n\n### Fixed\n\n- z\n', '2.0.0', '2026-12-08');
  assert.equal(opened, '# C\n\n## [Unreleased]\n\n## [2.0.0] - 2026-12-08\n\n### Fixed\n\n- z\n');
  assert.equal(openRelease(opened, '2.0.0', '2026-12-09'), opened, 'a version already opened is left');
});

test('`set` writes the version into every copy, and `check` then agrees; a stray copy fails it', () => {
  const copy = mkdtempSync(join(tmpdir(), 'agy-version-'));
  try {
    for (const file of [
      'Cargo.toml',
      'Cargo.lock',
      'CHANGELOG.md',
      'dsh-plugin/package.json',
      'dsh-plugin/package-lock.json',
      'dsh-plugin/npm',
    ]) {
      cpSync(join(root, file), join(copy, file), { recursive: true, filter: (path) => !path.endsWith('.node') });
    }
    const members = /members = \[([^\]]*)\]/.exec(readFileSync(join(root, 'Cargo.toml'), 'utf8'))[1];
    for (const [, dir] of members.matchAll(/"([^"]+)"/g)) {
      cpSync(join(root, dir, 'Cargo.toml'), join(copy, dir, 'Cargo.toml'));
    }
    const env = { ...process.env, VERSION_ROOT: copy };
    const run = (...args) => spawnSync(process.execPath, [SCRIPT, ...args], { env, encoding: 'utf8' });
    assert.equal(run('set', 'not-a-version').status, 2);
    const set = run('set', '9.8.7-rc.1');
    assert.equal(set.status, 0, set.stderr);
    assert.equal(run().stdout.trim(), '9.8.7-rc.1');
    const check = run('check', '--tag', 'v9.8.7-rc.1');
    assert.equal(check.status, 0, check.stderr);
    assert.match(
      readFileSync(join(copy, 'CHANGELOG.md'), 'utf8'),
      /\n## \[Unreleased\]\n\n## \[9\.8\.7-rc\.1\] - \d{4}-\d{2}-\d{2}\n/,
    );
    for (const manifest of platformManifests().map((file) => file.replace(root, copy))) {
      assert.equal(readJson(manifest).version, '9.8.7-rc.1', manifest);
    }
    assert.match(
      readFileSync(join(copy, 'Cargo.lock'), 'utf8'),
      /name = "antigravity-acp-dsh"\nversion = "9\.8\.7-rc\.1"\n/,
    );
    // A tag that is not the version is refused, naming both.
    const wrongTag = run('check', '--tag', 'v9.8.7');
    assert.equal(wrongTag.status, 1);
    assert.match(wrongTag.stderr, /the tag v9\.8\.7 is not v9\.8\.7-rc\.1/);
    // One platform package left behind fails the check, naming it.
    const stray = join(copy, 'dsh-plugin', 'npm', 'linux-arm64-gnu', 'package.json');
    writeFileSync(stray, JSON.stringify({ ...readJson(stray), version: '9.8.6' }, null, 2));
    const broken = run('check');
    assert.equal(broken.status, 1);
    assert.match(broken.stderr, /npm\/linux-arm64-gnu\/package\.json version: 9\.8\.6, wanted 9\.8\.7-rc\.1/);
    // The entries under Unreleased moved to the new section, the release's notes.
    const notes = run('notes', '9.8.7-rc.1');
    assert.equal(notes.status, 0, notes.stderr);
    assert.match(notes.stdout, /### Added/);
    assert.equal(run('notes', 'Unreleased').status, 1, 'Unreleased is left empty');
    assert.equal(run('notes', '9.9.9').status, 1, 'no section, no notes');
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
});

test('`notes` prints the release section from the real changelog when it exists', () => {
  const out = execFileSync(process.execPath, [SCRIPT, 'notes', 'Unreleased'], { encoding: 'utf8' });
  assert.match(out, /### Added/);
});
