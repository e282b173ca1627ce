// The addon loader (lib/binding-platform.js, lib/binding.js) without other platforms'
// binaries: `choosePackage` and `loadAddon` take the platform, the architecture, a
// `process.report` stand-in and a `require`-like resolver, so each platform is played here.
// Covered: the six mappings, win32 x64 to the GNU package, unsupported platforms and musl
// refused with ACP_PLATFORM_UNSUPPORTED naming the platform and the package, a platform
// package of another version refused, the order (override, package, local build), and that
// importing the plugin loads no addon while its first adapter does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { LlmError } from '@deepseek-ai/dsh-llm';
import {
  PLATFORMS,
  TARGETS,
  addonFile,
  choosePackage,
  detectLibc,
  packageName,
  tagOfTriple,
} from '../lib/binding-platform.js';
import { PLATFORM_UNSUPPORTED, loadAddon } from '../lib/binding.js';

const VERSION = '0.1.0';
const LOCAL_DIR = '/checkout/dsh-plugin';

/** A `process.report` stand-in: glibc's header carries `glibcVersionRuntime`, musl's none. */
function report(libc) {
  const stand = {
    excludeNetwork: false,
    /** What `excludeNetwork` was while each report was made. */
    excludedDuring: [],
    getReport() {
      this.excludedDuring.push(this.excludeNetwork);
      return { header: libc === 'glibc' ? { glibcVersionRuntime: '2.36' } : {} };
    },
  };
  return stand;
}

/**
 * A `require`-like resolver over installed packages (name → version) and addon files; it
 * records every id it was asked to load.
 */
function resolver({ packages = {}, files = [] } = {}) {
  const loads = [];
  const installed = (name) => Object.hasOwn(packages, name);
  const notFound = (id) => Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
  const require = (id) => {
    loads.push(id);
    const manifest = id.match(/^(.*)\/package\.json$/)?.[1];
    if (manifest !== undefined && installed(manifest)) return { name: manifest, version: packages[manifest] };
    if (installed(id) || files.includes(id)) return { loaded: id };
    throw notFound(id);
  };
  require.resolve = (id) => {
    if (installed(id)) return `/host/node_modules/${id}/index.node`;
    if (files.includes(id)) return id;
    throw notFound(id);
  };
  return { require, loads };
}

/** `loadAddon` for a played host; `require` and the local files come from `resolver`. */
function load(host, { packages, files, override } = {}) {
  const { require, loads } = resolver({ packages, files });
  const exists = (path) => (files ?? []).includes(path);
  return { loads, run: () => loadAddon({ ...host, require, exists, version: VERSION, localDir: LOCAL_DIR, override }) };
}

/** Asserts `run` throws ACP_PLATFORM_UNSUPPORTED whose message has every one of `names`. */
function refused(run, ...names) {
  assert.throws(run, (error) => {
    assert.ok(error instanceof LlmError, 'a DSH LlmError');
    assert.equal(error.code, PLATFORM_UNSUPPORTED);
    for (const name of names) assert.ok(error.message.includes(name), `the message names ${name}: ${error.message}`);
    return true;
  });
}

const MAPPINGS = [
  [{ platform: 'linux', arch: 'x64', report: report('glibc') }, 'linux-x64-gnu', 'x86_64-unknown-linux-gnu'],
  [{ platform: 'linux', arch: 'arm64', report: report('glibc') }, 'linux-arm64-gnu', 'aarch64-unknown-linux-gnu'],
  [{ platform: 'darwin', arch: 'x64' }, 'darwin-x64', 'x86_64-apple-darwin'],
  [{ platform: 'darwin', arch: 'arm64' }, 'darwin-arm64', 'aarch64-apple-darwin'],
  [{ platform: 'win32', arch: 'x64' }, 'win32-x64-gnu', 'x86_64-pc-windows-gnu'],
  [{ platform: 'win32', arch: 'arm64' }, 'win32-arm64-gnu', 'aarch64-pc-windows-gnullvm'],
];

test('the six targets, named as napi-rs names them', () => {
  assert.deepEqual(
    PLATFORMS,
    MAPPINGS.map(([, tag]) => tag),
  );
  for (const [, tag, triple] of MAPPINGS) {
    assert.equal(TARGETS[tag].triple, triple);
    assert.equal(tagOfTriple(triple), tag);
    assert.equal(packageName(tag), `antigravity-acp-dsh-${tag}`);
    assert.equal(addonFile(tag), `antigravity-acp-dsh.${tag}.node`);
  }
  assert.equal(tagOfTriple('x86_64-pc-windows-msvc'), undefined, 'no msvc package');
});

for (const [host, tag] of MAPPINGS) {
  test(`${host.platform}-${host.arch} loads the package ${packageName(tag)}`, () => {
    const choice = choosePackage(host);
    assert.equal(choice.tag, tag);
    assert.equal(choice.supported, true);
    assert.equal(choice.packageName, packageName(tag));
    const played = load(host, { packages: { [packageName(tag)]: VERSION } });
    const loaded = played.run();
    assert.equal(loaded.source, 'package');
    assert.deepEqual(loaded.addon, { loaded: packageName(tag) });
    assert.equal(loaded.path, `/host/node_modules/${packageName(tag)}/index.node`);
    assert.deepEqual(
      played.loads,
      [`${packageName(tag)}/package.json`, packageName(tag)],
      'the version is read before the addon loads',
    );
  });
}

test('win32 x64 maps to the GNU package, and reads no libc', () => {
  const windows = report('glibc');
  const choice = choosePackage({ platform: 'win32', arch: 'x64', report: windows });
  assert.equal(choice.packageName, 'antigravity-acp-dsh-win32-x64-gnu');
  assert.equal(choice.file, 'antigravity-acp-dsh.win32-x64-gnu.node');
  assert.equal(choice.platform, 'win32-x64');
  assert.deepEqual(windows.excludedDuring, [], 'no report is made off Linux');
});

test('an unsupported platform throws ACP_PLATFORM_UNSUPPORTED naming the platform and the package, and loads nothing', () => {
  const cases = [
    [{ platform: 'freebsd', arch: 'x64' }, 'freebsd-x64', 'antigravity-acp-dsh-freebsd-x64'],
    [
      { platform: 'linux', arch: 'ia32', report: report('glibc') },
      'linux-ia32-glibc',
      'antigravity-acp-dsh-linux-ia32-gnu',
    ],
    [{ platform: 'win32', arch: 'ia32' }, 'win32-ia32', 'antigravity-acp-dsh-win32-ia32-gnu'],
  ];
  for (const [host, platform, pkg] of cases) {
    // Even a package of that name, or a local build, is not loaded for a platform with no build.
    const played = load(host, {
      packages: { [pkg]: VERSION },
      files: [join(LOCAL_DIR, addonFile(pkg.slice('antigravity-acp-dsh-'.length)))],
    });
    refused(played.run, `no addon for ${platform}`, `the package ${pkg}`, 'linux-x64-gnu');
    assert.deepEqual(played.loads, [], `nothing loaded on ${platform}`);
  }
});

test('musl is refused with its own message; the report is made with excludeNetwork, then restored', () => {
  const musl = report('musl');
  assert.equal(detectLibc(musl), 'musl');
  assert.deepEqual(musl.excludedDuring, [true]);
  assert.equal(musl.excludeNetwork, false, 'restored');
  const played = load({ platform: 'linux', arch: 'x64', report: musl });
  refused(played.run, 'linux-x64-musl', 'antigravity-acp-dsh-linux-x64-musl', 'musl C libraries', 'glibc');
  assert.deepEqual(played.loads, []);
  assert.equal(musl.excludeNetwork, false, 'restored after the loader too');

  const keeps = report('glibc');
  keeps.excludeNetwork = true;
  assert.equal(detectLibc(keeps), 'glibc');
  assert.equal(keeps.excludeNetwork, true, 'a value set before is kept');
  const throwing = {
    excludeNetwork: undefined,
    getReport: () => {
      throw new Error('no report');
    },
  };
  assert.throws(() => detectLibc(throwing), /no report/);
  assert.equal(throwing.excludeNetwork, undefined, 'restored when the report throws');
  assert.equal(detectLibc(undefined), 'glibc', 'no report API: nothing says musl');
});

test('a platform package of another version is refused before its addon loads', () => {
  const pkg = 'antigravity-acp-dsh-linux-x64-gnu';
  const played = load(
    { platform: 'linux', arch: 'x64', report: report('glibc') },
    {
      packages: { [pkg]: '0.0.9' },
      files: [join(LOCAL_DIR, 'antigravity-acp-dsh.linux-x64-gnu.node')],
    },
  );
  refused(played.run, `antigravity-acp-dsh ${VERSION}`, `${pkg} at version 0.0.9`, 'linux-x64-glibc', 'same version');
  assert.deepEqual(played.loads, [`${pkg}/package.json`], 'the mismatched addon is never loaded, nor the local build');
});

test('the order: the override, then the platform package, then the local build; neither names both', () => {
  const host = { platform: 'darwin', arch: 'arm64' };
  const local = join(LOCAL_DIR, 'antigravity-acp-dsh.darwin-arm64.node');
  const pkg = 'antigravity-acp-dsh-darwin-arm64';

  const both = load(host, { packages: { [pkg]: VERSION }, files: [local] }).run();
  assert.equal(both.source, 'package', 'the package before the local build');

  const onlyLocal = load(host, { files: [local] }).run();
  assert.deepEqual([onlyLocal.source, onlyLocal.path], ['local', local]);

  const override = load(host, {
    packages: { [pkg]: VERSION },
    files: [local, '/ci/debug.node'],
    override: '/ci/debug.node',
  }).run();
  assert.deepEqual([override.source, override.path], ['override', '/ci/debug.node']);

  // An override is loaded on any platform, even one without a package.
  assert.equal(
    load({ platform: 'freebsd', arch: 'x64' }, { files: ['/ci/debug.node'], override: '/ci/debug.node' }).run().source,
    'override',
  );

  refused(load(host).run, 'darwin-arm64', `the package ${pkg} is not installed`, `no local build at ${local}`);
});

test('importing the plugin loads no addon; its first adapter does, once', async (t) => {
  const cache = createRequire(import.meta.url).cache;
  const addons = () => Object.keys(cache).filter((file) => file.endsWith('.node'));
  assert.deepEqual(addons(), [], 'no addon before the import');
  const plugin = await import('../index.js');
  const { binding } = await import('../lib/binding.js');
  assert.deepEqual(addons(), [], 'importing index.js loaded no addon');
  assert.equal(typeof plugin.addonPath, 'function', 'addonPath is a function: it loads on demand');

  let adapter;
  try {
    adapter = new plugin.AntigravityAcpAdapter('{}');
  } catch (error) {
    if (error?.code !== PLATFORM_UNSUPPORTED) throw error;
    t.skip(`no addon for this checkout (npm run build:debug): ${error.message}`);
    return;
  }
  t.after(() => adapter.dispose());
  const second = new plugin.AntigravityAcpAdapter('{}');
  t.after(() => second.dispose());
  assert.equal(addons().length, 1, 'the first adapter loaded the addon, the second nothing more');
  assert.deepEqual(addons(), [plugin.addonPath()], 'addonPath() names the file loaded');
  assert.equal(binding(), binding(), 'loaded once, shared');
});
