// The package as a user installs it: `npm pack` of the main package (which holds no addon,
// and lists every platform package as an optional dependency) and of the linux-x64-gnu
// platform package (holding the addon this checkout built), packed once, then installed
// into a fresh host folder with the pinned DSH packages (a tarball, not a link: Node's ESM
// resolution follows real paths), twice:
//
// - with npm (`--legacy-peer-deps`; npm skips the other platforms' packages), where the
//   test also checks what the tarball ships;
// - with pnpm, as DSH installs plugins: pnpm runs no install scripts (`strictDepBuilds`
//   makes a dependency that has one fail the install) and links each package's own
//   dependencies beside it, so the addon must come through the main package's optional
//   dependency (the platform tarball stands in for the published package through an
//   override) and every import must be declared. A TypeScript consumer there also
//   type-checks against the shipped `index.d.ts`.
//
// In each host, (1) a host script mounts the plugin and runs a text turn against the fake;
// the addon must come from the installed platform package; (2) DSH's own `boot()`
// (`@deepseek-ai/dsh-app-boot`: the Cordis Loader over a `cordis.yml`) mounts it from the
// package's bundle patch (found through its `dsh.bundle.patch`, as `loadProfile` does) plus
// a user layer configuring the server, by package name, and runs a turn. Each child prints
// the chunks it received, which the test reads through the stream checker and DSH's
// BlockAssembler, and asserts before it exits that the plugin's disposal left no fake
// process and no scratch directory. (3) The package's binary runs as DSH users run it, `npx
// antigravity-acp-dsh` or `pnpm exec antigravity-acp-dsh` from the host folder on the test's
// Node: `doctor` finds the addon in the platform package and DSH in the host. The host gets no `@deepseek-ai/schemastery` of its own:
// the installed package must bring every bare import of its files (dependencies or peers).
//
// The fresh host's dsh-llm is the run's (`scripts/test.mjs` runs the suite on each DSH of
// support/dsh-versions.mjs): on the 0.1.1-rc.2 run, 0.1.1-rc.2 from npm beside the rest at
// 0.1.0-rc.8, with no swap (support/dsh-host.mjs) in the children: a real install.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { PLATFORMS, addonFile, packageName } from '../lib/binding-platform.js';
import { drain } from '../support/checker.mjs';
import { leaveSwap, LLM_VARIABLE } from '../support/dsh-host.mjs';
import { SUPPORTED_HOSTS } from '../support/dsh-versions.mjs';
import { fakeServer } from '../support/fake.mjs';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const TAG = 'linux-x64-gnu';
const platformDir = join(root, 'npm', TAG);
const addon = join(platformDir, addonFile(TAG));
const skip = !existsSync(addon) && `no addon in npm/${TAG} (npm run build:debug)`;
// pnpm and tsc, pinned in package-lock.json, run by their JS entry on the Node running the test.
const PNPM = join(root, 'node_modules', 'pnpm', 'bin', 'pnpm.mjs');
const TSC = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const HOST_PACKAGES = [
  '@deepseek-ai/cordis',
  '@deepseek-ai/dsh-llm',
  '@deepseek-ai/dsh-brand',
  '@deepseek-ai/dsh-attachment',
  '@deepseek-ai/dsh-invariants',
  '@deepseek-ai/dsh-timeout',
  // DSH's boot glue and the Loader it drives.
  '@deepseek-ai/dsh-app-boot',
  '@deepseek-ai/cordis-plugin-loader',
  '@deepseek-ai/cordis-plugin-group',
  '@deepseek-ai/dsh-home-paths',
  '@deepseek-ai/dsh-launch-environment',
];
const versions = { ...manifest.devDependencies, '@deepseek-ai/dsh-llm': process.env[LLM_VARIABLE] };
const PINNED = HOST_PACKAGES.map((name) => `${name}@${versions[name] ?? manifest.devDependencies[name]}`);
// Every child (npm, pnpm, the host's Node) runs on what the fresh host installed.
leaveSwap();
// On a host whose dsh-llm's own declarations fail a type check there (0.1.1-rc.2, see
// support/dsh-versions.mjs), the TypeScript consumer skips declaration files, as its author
// would have to: its own code is still checked against index.d.ts.
const libCheckFails = SUPPORTED_HOSTS.some(
  (row) => row.dshLlm === versions['@deepseek-ai/dsh-llm'] && row.libCheckFails,
);
// The children find the fake's processes as the tests do (this helper uses node builtins only).
const FAKE_HELPER = pathToFileURL(join(root, 'support', 'fake.mjs')).href;

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

// A DSH plugin author's TypeScript against the installed package's `index.d.ts`. The
// `@ts-expect-error` lines fail the check if the types degrade to `any` (an unresolved
// declaration would).
const CONSUMER = `
import { Context } from '@deepseek-ai/cordis';
import { LlmAdapter } from '@deepseek-ai/dsh-llm';
import plugin, { AntigravityAcpAdapter, Config, DEFAULT_PROVIDER, addonPath, type ConfigInput } from 'antigravity-acp-dsh';
const input: ConfigInput = { server: { command: '/usr/bin/agy' }, timeoutMs: 1000, confinement: 'off', models: null };
const config: Config = Config(input);
const route: string = config.provider;
const defaulted: 'antigravity-acp' = DEFAULT_PROVIDER;
const args: string[] | undefined = config.server?.args;
const ctx = new Context();
ctx.plugin(plugin, config);
const adapter: LlmAdapter = new AntigravityAcpAdapter(JSON.stringify(config), () => ctx.get('attachments'));
const disposed: Promise<void> = adapter instanceof AntigravityAcpAdapter ? adapter.dispose() : Promise.resolve();
const where: string = addonPath();
// @ts-expect-error confinement is one of three words
const badMode: ConfigInput = { confinement: 'sometimes' };
// @ts-expect-error timeoutMs is a number
const badTimeout: ConfigInput = { timeoutMs: '10s' };
// @ts-expect-error the plugin takes a validated Config
plugin.apply(ctx, { timeoutMs: 1 });
export { route, defaulted, args, disposed, where, badMode, badTimeout };
`;

/**
 * The bare specifiers (package names) `source` imports, statically or dynamically.
 * @param {string} source - a module's text.
 * @returns {string[]}
 */
function bareImports(source) {
  const found = [
    ...source.matchAll(
      /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g,
    ),
  ]
    .map((m) => m[1] ?? m[2] ?? m[3])
    .filter((spec) => !spec.startsWith('.') && !spec.startsWith('/') && !spec.startsWith('node:'));
  return found.map((spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]));
}

// The tarballs, packed once for both installs (the platform package's debug addon is large).
const packDir = mkdtempSync(join(tmpdir(), 'agy-dsh-pack-'));
after(() => rmSync(packDir, { recursive: true, force: true }));
/** @type {Promise<{main: string, platform: string}> | undefined} */
let packing;
function packed() {
  /** @param {string} dir - a package folder. */
  const pack = async (dir) => {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', packDir], {
      cwd: dir,
      maxBuffer: 1 << 24,
    });
    return join(packDir, JSON.parse(stdout)[0].filename);
  };
  packing ??= (async () => ({ main: await pack(root), platform: await pack(platformDir) }))();
  return packing;
}

/**
 * A fresh host folder (a `package.json` only) and a fake that says hello, both removed after
 * the test.
 * @param {import('node:test').TestContext} t
 * @param {string} prefix - the folder's name prefix in the temp folder.
 */
function freshHost(t, prefix) {
  const host = mkdtempSync(join(tmpdir(), prefix));
  const fake = fakeServer({
    turns: [{ match: { prompt_contains: 'say hello' }, steps: [{ text: 'Hello from the packed plugin.' }] }],
  });
  t.after(() => {
    rmSync(host, { recursive: true, force: true });
    fake.remove();
  });
  writeFileSync(join(host, 'package.json'), JSON.stringify({ name: 'dsh-host', private: true, type: 'module' }));
  return { host, fake };
}

/**
 * The package's binary in an installed host, through the host's package manager (`npx` or
 * `pnpm exec`), on the test's Node (first on PATH, as DSH's own Node is where DSH runs):
 * `doctor` and `status` against the fake.
 * @param {string} host - the host folder, the plugin installed.
 * @param {ReturnType<typeof fakeServer>} fake
 * @param {string[]} launcher - the command and arguments before the binary's name.
 * @param {NodeJS.ProcessEnv} [baseEnv] - the environment to start from.
 */
async function runBin(host, fake, launcher, baseEnv = process.env) {
  const config = JSON.stringify({ server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow });
  const env = { ...baseEnv, PATH: `${dirname(process.execPath)}${delimiter}${baseEnv.PATH ?? ''}` };
  const [command, ...before] = launcher;
  const doctor = await run(command, [...before, 'antigravity-acp-dsh', 'doctor', '--json', '--config', config], {
    cwd: host,
    env,
    timeout: 60_000,
  }).catch((error) => error);
  const report = JSON.parse(doctor.stdout);
  const check = (id) => report.checks.find((c) => c.id === id);
  assert.deepEqual(
    [check('platform').status, check('platform').brief],
    ['ok', packageName(TAG)],
    `the binary loaded the installed platform package: ${check('platform').detail}`,
  );
  assert.equal(
    check('node').detail,
    `Node ${process.versions.node} (^22.19 || >=24)`,
    "the binary ran on the host's Node",
  );
  assert.equal(check('dsh').status, 'ok', `DSH resolved from the host folder: ${check('dsh').detail}`);
  assert.equal(check('signIn').status, 'ok', check('signIn').detail);
  assert.equal(doctor.code ?? 0, report.exitCode, "the binary exits with the report's code");
  const status = await run(command, [...before, 'antigravity-acp-dsh', 'status', '--config', config], {
    cwd: host,
    env,
    timeout: 60_000,
  }).catch((error) => error);
  assert.match(status.stdout, /^install: skip .*; sign-in: ok \(signed in\); confinement: /);
}

/**
 * Both children in an installed host: the host script's turn (its addon must be `expectedAddon`)
 * and DSH's boot from the bundle patch.
 * @param {string} host - the host folder, the plugin installed.
 * @param {ReturnType<typeof fakeServer>} fake
 * @param {string} expectedAddon - the addon file the plugin must load (compared by real path).
 */
async function runTurns(host, fake, expectedAddon) {
  writeFileSync(join(host, 'disposed.mjs'), DISPOSED);
  writeFileSync(join(host, 'host.mjs'), HOST);
  writeFileSync(join(host, 'boot.mjs'), BOOT);
  const config = { server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow };
  // In the environment, not argv: the children find the fake's processes by a path the
  // config names, and must not find themselves.
  const env = {
    ...process.env,
    AGY_DSH_CHILD: JSON.stringify({
      config,
      fakeHelper: FAKE_HELPER,
      needle: fake.scriptPath,
      scratchRoot: fake.scratchRoot,
    }),
  };
  const { stdout } = await run(process.execPath, ['host.mjs'], { cwd: host, env, timeout: 60_000 });
  const out = JSON.parse(stdout.trim().split('\n').at(-1));
  const turn = await drain(out.chunks);
  assert.deepEqual(turn.finish, { kind: 'stop' });
  assert.deepEqual(turn.blocks, [{ type: 'text', text: 'Hello from the packed plugin.' }]);
  assert.equal(
    realpathSync(out.addonPath),
    realpathSync(expectedAddon),
    'the addon came from the installed platform package',
  );

  const booted = await run(process.execPath, ['boot.mjs'], { cwd: host, env, timeout: 60_000 });
  const viaLoader = JSON.parse(booted.stdout.trim().split('\n').at(-1));
  assert.deepEqual(
    viaLoader.providers,
    [{ id: 'antigravity-acp', name: 'Google Antigravity (ACP)' }],
    "DSH's Loader mounted the bundle's row",
  );
  const bootTurn = await drain(viaLoader.chunks);
  assert.deepEqual(bootTurn.finish, { kind: 'stop' });
  assert.deepEqual(bootTurn.blocks, [{ type: 'text', text: 'Hello from the packed plugin.' }]);
}

test('the packed tarballs install with npm into a fresh host and run a text turn', {
  skip,
  timeout: 240_000,
}, async (t) => {
  const { host, fake } = freshHost(t, 'agy-dsh-host-');
  const { main, platform } = await packed();
  writeFileSync(join(host, '.npmrc'), 'legacy-peer-deps=true\n');
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', main, platform, ...PINNED], {
    cwd: host,
    maxBuffer: 1 << 24,
  });
  const installed = join(host, 'node_modules', 'antigravity-acp-dsh');
  assert.ok(!existsSync(join(installed, 'test')), 'the tests are not shipped');
  assert.deepEqual(
    readdirSync(installed).filter((f) => f.endsWith('.node')),
    [],
    'the main package ships no addon of its own',
  );
  const shipped = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  assert.deepEqual(
    shipped.optionalDependencies,
    Object.fromEntries(PLATFORMS.map((tag) => [packageName(tag), shipped.version])),
    "every platform package is an optional dependency, at the main package's version",
  );
  assert.equal(shipped.types, './index.d.ts');
  assert.equal(shipped.exports['.'].types, './index.d.ts');
  assert.ok(existsSync(join(installed, 'index.d.ts')), 'the declarations are shipped');
  const declared = new Set(Object.keys({ ...shipped.dependencies, ...shipped.peerDependencies }));
  const modules = [
    'index.js',
    join('bin', 'antigravity-acp-dsh.js'),
    ...readdirSync(join(installed, 'lib'))
      .filter((f) => f.endsWith('.js'))
      .map((f) => join('lib', f)),
  ];
  const sources = ['index.d.ts', ...modules];
  const imported = new Set(sources.flatMap((file) => bareImports(readFileSync(join(installed, file), 'utf8'))));
  assert.ok(imported.has('@deepseek-ai/schemastery'), 'the import scan sees lib/config.js');
  assert.deepEqual(
    [...imported].filter((name) => !declared.has(name)),
    [],
    'every package the shipped files import is a dependency or a peer',
  );
  await runTurns(host, fake, join(host, 'node_modules', packageName(TAG), addonFile(TAG)));
  assert.ok(existsSync(join(host, 'node_modules', '.bin', 'antigravity-acp-dsh')), 'npm linked the binary');
  await runBin(host, fake, ['npx', '--no']);
});

test('the packed tarballs install with pnpm (no install scripts) into a fresh host, which loads the addon and runs a text turn', {
  skip,
  timeout: 240_000,
}, async (t) => {
  assert.ok(existsSync(PNPM), `${PNPM} is missing (npm ci installs pnpm)`);
  const { host, fake } = freshHost(t, 'agy-dsh-pnpm-host-');
  const { main, platform } = await packed();
  // pnpm's settings for this host: its store inside the host (each build's addon is new
  // content: a shared store would keep every one); a dependency with an install script
  // fails the install rather than being skipped with a warning; and the platform package,
  // which the main package names as an optional dependency and the registry has not got
  // yet, resolves to its tarball as it would to the published package.
  writeFileSync(
    join(host, 'pnpm-workspace.yaml'),
    [
      'storeDir: ./.pnpm-store',
      'updateNotifier: false',
      'strictDepBuilds: true',
      'overrides:',
      `  ${packageName(TAG)}: ${JSON.stringify(`file:${platform}`)}`,
      '',
    ].join('\n'),
  );
  // npm's variables (`npm test` sets them) would configure pnpm too.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  await run(process.execPath, [PNPM, 'add', '--reporter=append-only', '--prefer-offline', main, ...PINNED], {
    cwd: host,
    env,
    maxBuffer: 1 << 24,
  }).catch((error) =>
    assert.fail(`pnpm did not install the tarballs (an install script is refused):\n${error.stdout}${error.stderr}`),
  );
  assert.ok(!existsSync(join(host, 'node_modules', packageName(TAG))), 'the host has no platform package of its own');
  // pnpm links a package's dependencies beside it in its virtual store: the platform
  // package is there as the main package's optional dependency, and the loader finds it so.
  const installed = realpathSync(join(host, 'node_modules', 'antigravity-acp-dsh'));
  const beside = join(dirname(installed), packageName(TAG));
  assert.ok(existsSync(beside), "pnpm installed the platform package as the plugin's optional dependency");
  await runTurns(host, fake, join(beside, addonFile(TAG)));
  await runBin(host, fake, [process.execPath, PNPM, 'exec'], env);

  writeFileSync(join(host, 'consumer.ts'), CONSUMER);
  const types = join(root, 'node_modules', '@types');
  const tsc = [
    '--noEmit',
    '--strict',
    '--target',
    'es2024',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--typeRoots',
    types,
    '--types',
    'node',
    ...(libCheckFails ? ['--skipLibCheck'] : []),
    'consumer.ts',
  ];
  await run(process.execPath, [TSC, ...tsc], { cwd: host, maxBuffer: 1 << 24 }).catch((error) => {
    assert.fail(
      `a TypeScript consumer does not type-check against the shipped index.d.ts:\n${error.stdout}${error.stderr}`,
    );
  });
});
