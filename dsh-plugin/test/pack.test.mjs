// The package as a user installs it: `npm pack` of the main package (which holds no addon,
// and lists every platform package as an optional dependency) and of the linux-x64-gnu
// platform package (holding the addon this checkout built), both tarballs installed into a
// fresh host folder with the pinned DSH packages (a tarball, not a link: Node's ESM
// resolution follows real paths; npm skips the other platforms' packages). There, (1) a
// host script mounts the plugin and runs a text turn against the fake; the addon must come
// from the installed platform package; (2) DSH's own
// `boot()` (`@deepseek-ai/dsh-app-boot`: the Cordis Loader over a `cordis.yml`) mounts it
// from the package's bundle patch (found through its `dsh.bundle.patch`, as `loadProfile`
// does) plus a user layer configuring the server, by package name, and runs a turn. Each
// child prints the chunks it received, which the test reads through the stream checker and
// DSH's BlockAssembler, and asserts before it exits that the plugin's disposal left no fake
// process and no scratch directory. The host gets no `@deepseek-ai/schemastery` of its own:
// the installed package must bring every bare import of its files (dependencies or peers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { PLATFORMS, packageName } from '../lib/binding-platform.js';
import { drain } from './helpers/checker.mjs';
import { fakeServer } from './helpers/fake.mjs';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const platformDir = join(root, 'npm', 'linux-x64-gnu');
const addon = join(platformDir, 'antigravity-acp-dsh.linux-x64-gnu.node');
const HOST_PACKAGES = [
  '@deepseek-ai/cordis', '@deepseek-ai/dsh-llm', '@deepseek-ai/dsh-brand', '@deepseek-ai/dsh-attachment',
  '@deepseek-ai/dsh-invariants', '@deepseek-ai/dsh-timeout',
  // DSH's boot glue and the Loader it drives.
  '@deepseek-ai/dsh-app-boot', '@deepseek-ai/cordis-plugin-loader', '@deepseek-ai/cordis-plugin-group',
  '@deepseek-ai/dsh-home-paths', '@deepseek-ai/dsh-launch-environment',
];
const PINNED = HOST_PACKAGES.map((name) => `${name}@${manifest.devDependencies[name]}`);
// The children find the fake's processes as the tests do (this helper uses node builtins only).
const FAKE_HELPER = pathToFileURL(join(root, 'test', 'helpers', 'fake.mjs')).href;

// What both children do once their turn streamed: dispose the plugin's scope, then, before
// exiting, assert that no fake process and no scratch directory of it is left.
const DISPOSED = `
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
export async function disposed(dispose, { fakeHelper, needle, scratchRoot }) {
  const { livePids } = await import(fakeHelper);
  await dispose();
  assert.deepEqual(livePids(needle), [], 'no fake process once the disposal settled');
  assert.deepEqual(readdirSync(scratchRoot), [], 'no scratch directory once the disposal settled');
}
`;

const HOST = `
import { Context } from '@deepseek-ai/cordis';
import { LlmRuntime, createUserMessage } from '@deepseek-ai/dsh-llm';
import plugin, { addonPath } from 'antigravity-acp-dsh';
import { disposed } from './disposed.mjs';
const { config, ...fake } = JSON.parse(process.env.AGY_DSH_CHILD);
const ctx = new Context();
ctx.plugin(LlmRuntime);
for (let i = 0; ctx.get('llm') === undefined; i++) {
  if (i > 500) throw new Error('no llm service');
  await new Promise((r) => setTimeout(r, 10));
}
const fiber = ctx.plugin(plugin, config);
await fiber.await?.();
const chunks = [];
const message = createUserMessage({ content: [{ type: 'text', text: 'Please say hello' }], source: { kind: 'user' } });
for await (const chunk of ctx.llm.stream({ provider: 'antigravity-acp', model: 'server-default', messages: [message] })) chunks.push(chunk);
await disposed(() => fiber.dispose(), fake);
console.log(JSON.stringify({ addonPath: addonPath(), chunks }));
`;

const BOOT = `
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { boot, loadOverlayPatches } from '@deepseek-ai/dsh-app-boot';
import { createUserMessage } from '@deepseek-ai/dsh-llm';
import { disposed } from './disposed.mjs';
const { config, ...fake } = JSON.parse(process.env.AGY_DSH_CHILD);
const here = process.cwd();
writeFileSync(join(here, 'cordis.yml'), "- id: llm\\n  name: '@deepseek-ai/dsh-llm'\\n");
const dir = join(here, 'node_modules', 'antigravity-acp-dsh');
const declared = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dsh.bundle.patch;
const bundle = loadOverlayPatches('host', join(dir, declared));
const user = [{ id: 'llm-antigravity-acp', name: 'antigravity-acp-dsh', config: { provider: 'antigravity-acp', ...config } }];
const ctx = await boot('host', join(here, 'cordis.yml'), [...bundle, ...user], undefined, pathToFileURL(here + '/').href);
const providers = ctx.llm.listProviders();
const chunks = [];
const message = createUserMessage({ content: [{ type: 'text', text: 'Please say hello' }], source: { kind: 'user' } });
for await (const chunk of ctx.llm.stream({ provider: 'antigravity-acp', model: 'server-default', messages: [message] })) chunks.push(chunk);
await disposed(() => ctx.fiber.dispose(), fake);
console.log(JSON.stringify({ providers, chunks }));
`;

/**
 * The bare specifiers (package names) `source` imports, statically or dynamically.
 * @param {string} source - a module's text.
 * @returns {string[]}
 */
function bareImports(source) {
  const found = [...source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)]
    .map((m) => m[1] ?? m[2] ?? m[3])
    .filter((spec) => !spec.startsWith('.') && !spec.startsWith('/') && !spec.startsWith('node:'));
  return found.map((spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]));
}

test('the packed tarballs install into a fresh host and run a text turn', { skip: !existsSync(addon) && 'no addon in npm/linux-x64-gnu (npm run build:debug)', timeout: 240_000 }, async (t) => {
  const host = mkdtempSync(join(tmpdir(), 'agy-dsh-host-'));
  const fake = fakeServer({ turns: [{ match: { prompt_contains: 'say hello' }, steps: [{ text: 'Hello from the packed plugin.' }] }] });
  t.after(() => {
    rmSync(host, { recursive: true, force: true });
    fake.remove();
  });
  const pack = async (dir) => {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', host], { cwd: dir, maxBuffer: 1 << 24 });
    return join(host, JSON.parse(stdout)[0].filename);
  };
  const [main, platform] = [await pack(root), await pack(platformDir)];
  writeFileSync(join(host, 'package.json'), JSON.stringify({ name: 'dsh-host', private: true, type: 'module' }));
  writeFileSync(join(host, '.npmrc'), 'legacy-peer-deps=true\n');
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', main, platform, ...PINNED], { cwd: host, maxBuffer: 1 << 24 });
  const installed = join(host, 'node_modules', 'antigravity-acp-dsh');
  assert.ok(!existsSync(join(installed, 'test')), 'the tests are not shipped');
  assert.deepEqual(readdirSync(installed).filter((f) => f.endsWith('.node')), [], 'the main package ships no addon of its own');
  const shipped = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  assert.deepEqual(
    shipped.optionalDependencies,
    Object.fromEntries(PLATFORMS.map((tag) => [packageName(tag), shipped.version])),
    'every platform package is an optional dependency, at the main package\'s version',
  );
  const declared = new Set(Object.keys({ ...shipped.dependencies, ...shipped.peerDependencies }));
  const modules = ['index.js', ...readdirSync(join(installed, 'lib')).filter((f) => f.endsWith('.js')).map((f) => join('lib', f))];
  const imported = new Set(modules.flatMap((file) => bareImports(readFileSync(join(installed, file), 'utf8'))));
  assert.ok(imported.has('@deepseek-ai/schemastery'), 'the import scan sees lib/config.js');
  assert.deepEqual([...imported].filter((name) => !declared.has(name)), [], 'every package the shipped files import is a dependency or a peer');
  writeFileSync(join(host, 'disposed.mjs'), DISPOSED);
  writeFileSync(join(host, 'host.mjs'), HOST);
  const config = { server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow };
  // In the environment, not argv: the children find the fake's processes by a path the
  // config names, and must not find themselves.
  const env = { ...process.env, AGY_DSH_CHILD: JSON.stringify({ config, fakeHelper: FAKE_HELPER, needle: fake.scriptPath, scratchRoot: fake.scratchRoot }) };
  const { stdout } = await run(process.execPath, ['host.mjs'], { cwd: host, env, timeout: 60_000 });
  const out = JSON.parse(stdout.trim().split('\n').at(-1));
  const turn = await drain(out.chunks);
  assert.deepEqual(turn.finish, { kind: 'stop' });
  assert.deepEqual(turn.blocks, [{ type: 'text', text: 'Hello from the packed plugin.' }]);
  assert.equal(
    out.addonPath,
    join(host, 'node_modules', 'antigravity-acp-dsh-linux-x64-gnu', 'antigravity-acp-dsh.linux-x64-gnu.node'),
    'the addon came from the installed platform package',
  );

  writeFileSync(join(host, 'boot.mjs'), BOOT);
  const booted = await run(process.execPath, ['boot.mjs'], { cwd: host, env, timeout: 60_000 });
  const viaLoader = JSON.parse(booted.stdout.trim().split('\n').at(-1));
  assert.deepEqual(viaLoader.providers, [{ id: 'antigravity-acp', name: 'Google Antigravity (ACP)' }], "DSH's Loader mounted the bundle's row");
  const bootTurn = await drain(viaLoader.chunks);
  assert.deepEqual(bootTurn.finish, { kind: 'stop' });
  assert.deepEqual(bootTurn.blocks, [{ type: 'text', text: 'Hello from the packed plugin.' }]);
});
