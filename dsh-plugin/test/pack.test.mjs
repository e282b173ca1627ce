// The package as a user installs it: `npm pack` of the main package and of the platform
// package (holding the addon this checkout built), both tarballs installed into a fresh
// host folder with the pinned DSH packages (a tarball, not a link: Node's ESM resolution
// follows real paths). There, (1) a host script mounts the plugin and runs a text turn
// against the fake; the addon must come from the installed platform package; (2) DSH's own
// `boot()` (`@deepseek-ai/dsh-app-boot`: the Cordis Loader over a `cordis.yml`) mounts it
// from the package's bundle patch (found through its `dsh.bundle.patch`, as `loadProfile`
// does) plus a user layer configuring the server, by package name, and runs a turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { fakeServer } from './helpers/fake.mjs';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const platformDir = join(root, 'npm', 'linux-x64-gnu');
const addon = join(platformDir, 'antigravity-acp-dsh.linux-x64-gnu.node');
const HOST_PACKAGES = [
  '@deepseek-ai/cordis', '@deepseek-ai/dsh-llm', '@deepseek-ai/dsh-brand', '@deepseek-ai/dsh-attachment',
  '@deepseek-ai/dsh-invariants', '@deepseek-ai/dsh-timeout', '@deepseek-ai/schemastery',
  // DSH's boot glue and the Loader it drives.
  '@deepseek-ai/dsh-app-boot', '@deepseek-ai/cordis-plugin-loader', '@deepseek-ai/cordis-plugin-group',
  '@deepseek-ai/dsh-home-paths', '@deepseek-ai/dsh-launch-environment',
];
const PINNED = HOST_PACKAGES.map((name) => `${name}@${manifest.devDependencies[name]}`);

const HOST = `
import { Context } from '@deepseek-ai/cordis';
import { BlockAssembler, LlmRuntime, createUserMessage } from '@deepseek-ai/dsh-llm';
import plugin, { addonPath } from 'antigravity-acp-dsh';
const config = JSON.parse(process.argv[2]);
const ctx = new Context();
ctx.plugin(LlmRuntime);
for (let i = 0; ctx.get('llm') === undefined; i++) {
  if (i > 500) throw new Error('no llm service');
  await new Promise((r) => setTimeout(r, 10));
}
const fiber = ctx.plugin(plugin, config);
await fiber.await?.();
const assembler = new BlockAssembler();
const message = createUserMessage({ content: [{ type: 'text', text: 'Please say hello' }], source: { kind: 'user' } });
for await (const chunk of ctx.llm.stream({ provider: 'antigravity-acp', model: 'server-default', messages: [message] })) assembler.push(chunk);
await fiber.dispose();
console.log(JSON.stringify({ addonPath, finish: assembler.finish, blocks: assembler.blocks() }));
`;

const BOOT = `
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { boot, loadOverlayPatches } from '@deepseek-ai/dsh-app-boot';
import { BlockAssembler, createUserMessage } from '@deepseek-ai/dsh-llm';
const config = JSON.parse(process.argv[2]);
const here = process.cwd();
writeFileSync(join(here, 'cordis.yml'), "- id: llm\\n  name: '@deepseek-ai/dsh-llm'\\n");
const dir = join(here, 'node_modules', 'antigravity-acp-dsh');
const declared = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dsh.bundle.patch;
const bundle = loadOverlayPatches('host', join(dir, declared));
const user = [{ id: 'llm-antigravity-acp', name: 'antigravity-acp-dsh', config: { provider: 'antigravity-acp', ...config } }];
const ctx = await boot('host', join(here, 'cordis.yml'), [...bundle, ...user], undefined, pathToFileURL(here + '/').href);
const providers = ctx.llm.listProviders();
const assembler = new BlockAssembler();
const message = createUserMessage({ content: [{ type: 'text', text: 'Please say hello' }], source: { kind: 'user' } });
for await (const chunk of ctx.llm.stream({ provider: 'antigravity-acp', model: 'server-default', messages: [message] })) assembler.push(chunk);
await ctx.fiber.dispose();
console.log(JSON.stringify({ providers, finish: assembler.finish, blocks: assembler.blocks() }));
`;

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
  assert.ok(!existsSync(join(host, 'node_modules', 'antigravity-acp-dsh', 'test')), 'the tests are not shipped');
  writeFileSync(join(host, 'host.mjs'), HOST);
  const config = { server: fake.server, scratchRoot: fake.scratchRoot };
  const { stdout } = await run(process.execPath, ['host.mjs', JSON.stringify(config)], { cwd: host, timeout: 60_000 });
  const out = JSON.parse(stdout.trim().split('\n').at(-1));
  assert.deepEqual(out.finish, { kind: 'stop' });
  assert.deepEqual(out.blocks, [{ type: 'text', text: 'Hello from the packed plugin.' }]);
  assert.equal(
    out.addonPath,
    join(host, 'node_modules', 'antigravity-acp-dsh-linux-x64-gnu', 'antigravity-acp-dsh.linux-x64-gnu.node'),
    'the addon came from the installed platform package',
  );
  assert.deepEqual(fake.pids(), []);

  writeFileSync(join(host, 'boot.mjs'), BOOT);
  const booted = await run(process.execPath, ['boot.mjs', JSON.stringify(config)], { cwd: host, timeout: 60_000 });
  const viaLoader = JSON.parse(booted.stdout.trim().split('\n').at(-1));
  assert.deepEqual(viaLoader.providers, [{ id: 'antigravity-acp', name: 'Google Antigravity (ACP)' }], "DSH's Loader mounted the bundle's row");
  assert.deepEqual(viaLoader.finish, { kind: 'stop' });
  assert.deepEqual(viaLoader.blocks, [{ type: 'text', text: 'Hello from the packed plugin.' }]);
  assert.deepEqual(fake.pids(), [], 'the booted tree disposed the server');
});
