// The package as a user installs it: `npm pack` of the main package (which holds no addon,
// and lists every platform package as an optional dependency) and of the linux-x64-gnu
// platform package (holding the addon this checkout built), packed once and published by
// `ci/publish.sh` to a throwaway Verdaccio on loopback (`support/registry.mjs`, the same
// registry `ci/rehearse.sh` publishes the release-built packages to), then installed by
// name into fresh host folders whose project `.npmrc` names that registry only, with the
// pinned DSH packages, twice:
//
// - with npm (`--legacy-peer-deps`; npm skips the other platforms' packages, which the
//   registry has not got), where the test also checks what the tarball ships;
// - with pnpm, as DSH installs plugins: pnpm runs no install scripts (`strictDepBuilds`
//   makes a dependency that has one fail the install) and links each package's own
//   dependencies beside it, so the addon must come through the main package's optional
//   dependency and every import must be declared. A TypeScript consumer there also
//   type-checks against the shipped `index.d.ts`.
//
// In each host (support/packed.mjs, shared with the rehearsal), (1) a host script mounts
// the plugin and runs a text turn against the fake; the addon must come from the installed
// platform package; (2) DSH's own `boot()` (`@deepseek-ai/dsh-app-boot`: the Cordis Loader
// over a `cordis.yml`) mounts it from the package's bundle patch (found through its
// `dsh.bundle.patch`, as `loadProfile` does) plus a user layer configuring the server, by
// package name, and runs a turn; (3) a tool turn across two streams. Each child prints the
// chunks it received, which the test reads through the stream checker and DSH's
// BlockAssembler, and asserts before it exits that the plugin's disposal left no fake
// process and no scratch directory. (4) The package's binary runs as DSH users run it, `npx
// antigravity-acp-dsh` or `pnpm exec antigravity-acp-dsh` from the host folder on the test's
// Node: `doctor` finds the addon in the platform package and DSH in the host, `doctor
// --quick` shows no `fail` line. The host gets no `@deepseek-ai/schemastery` of its own:
// the installed package must bring every bare import of its files (dependencies or peers).
//
// The fresh host's dsh-llm is the run's (`scripts/test.mjs` runs the suite on each DSH of
// support/dsh-versions.mjs): on the 0.1.1-rc.2 run, 0.1.1-rc.2 from npm beside the rest at
// 0.1.0-rc.8, with no swap (support/dsh-host.mjs) in the children: a real install
// (support/packed.mjs's PINNED reads the run's dsh-llm).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PLATFORMS, addonFile, packageName } from '../lib/binding-platform.js';
import { leaveSwap } from '../support/dsh-host.mjs';
import { SUPPORTED_HOSTS } from '../support/dsh-versions.mjs';
import { PINNED, PNPM, cleanEnv, freshHostDir, packedFake, runBin, runTurns } from '../support/packed.mjs';
import { npmAuthEnv, startRegistry } from '../support/registry.mjs';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const TAG = 'linux-x64-gnu';
const platformDir = join(root, 'npm', TAG);
const addon = join(platformDir, addonFile(TAG));
const VERDACCIO = join(root, '..', 'ci', 'verdaccio', 'node_modules', 'verdaccio');
const skip =
  (!existsSync(addon) && `no addon in npm/${TAG} (npm run build:debug)`) ||
  (!existsSync(VERDACCIO) && 'no Verdaccio (npm ci --prefix ci/verdaccio)');
// tsc, pinned in package-lock.json, run by its JS entry on the Node running the test.
const TSC = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
// Every child (npm, pnpm, the host's Node) runs on what the fresh host installed.
leaveSwap();
// On a host whose dsh-llm's own declarations fail a type check there (0.1.1-rc.2, see
// support/dsh-versions.mjs), the TypeScript consumer skips declaration files, as its author
// would have to: its own code is still checked against index.d.ts.
const hostLlm = PINNED.find((spec) => spec.startsWith('@deepseek-ai/dsh-llm@'))?.split('@')[2];
const libCheckFails = SUPPORTED_HOSTS.some((row) => row.dshLlm === hostLlm && row.libCheckFails);

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

// The tarballs, packed once for both installs (the platform package's debug addon is large)
// and published once, by ci/publish.sh, to a registry of this test's own.
const work = mkdtempSync(join(tmpdir(), 'agy-dsh-pack-'));
const packDir = join(work, 'packages');
/** @type {Awaited<ReturnType<typeof startRegistry>> | undefined} */
let registry;
after(() => {
  registry?.stop();
  rmSync(work, { recursive: true, force: true });
});
/** @type {Promise<string> | undefined} */
let publishing;
/**
 * The registry's URL once both packages are published on it.
 * @returns {Promise<string>}
 */
function published() {
  /** @param {string} dir - a package folder. */
  const pack = (dir) =>
    run('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: dir, env: cleanEnv(), maxBuffer: 1 << 24 });
  publishing ??= (async () => {
    mkdirSync(packDir, { recursive: true });
    await pack(root);
    await pack(platformDir);
    registry = await startRegistry(join(work, 'registry'));
    const env = { ...cleanEnv(), ...npmAuthEnv(registry.url, registry.token) };
    await run('bash', [join(root, '..', 'ci', 'publish.sh'), '--registry', registry.url, packDir], {
      env,
      maxBuffer: 1 << 24,
    });
    return registry.url;
  })();
  return publishing;
}

/**
 * A fresh host folder whose `.npmrc` names the registry only, and a fake that says hello and
 * plays a tool turn, both removed after the test.
 * @param {import('node:test').TestContext} t
 * @param {string} prefix - the folder's name prefix in the temp folder.
 * @param {string} url - the registry.
 */
function freshHost(t, prefix, url) {
  const host = freshHostDir(prefix, url);
  const fake = packedFake();
  t.after(() => {
    rmSync(host, { recursive: true, force: true });
    fake.remove();
  });
  return { host, fake };
}

test('the published packages install by name with npm into a fresh host and run a text turn and a tool turn', {
  skip,
  timeout: 240_000,
}, async (t) => {
  const url = await published();
  const { host, fake } = freshHost(t, 'agy-dsh-host-', url);
  // npm on this test's Node (DSH's Node, where DSH installs): the platform packages' engines
  // are the main package's, and npm skips an optional dependency whose engines refuse the
  // Node it runs on (the machine's own Node 20 would get no addon).
  const env = { ...cleanEnv(), PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };
  await run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', 'antigravity-acp-dsh', ...PINNED], {
    cwd: host,
    env,
    maxBuffer: 1 << 24,
  });
  assert.ok(
    existsSync(join(host, 'node_modules', packageName(TAG))),
    'npm installed the platform package from the registry',
  );
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
  await runBin(host, fake, ['npx', '--no'], env);
});

test('the published packages install by name with pnpm (no install scripts) into a fresh host, which loads the addon and runs a text turn and a tool turn', {
  skip,
  timeout: 240_000,
}, async (t) => {
  assert.ok(existsSync(PNPM), `${PNPM} is missing (npm ci installs pnpm)`);
  const url = await published();
  const { host, fake } = freshHost(t, 'agy-dsh-pnpm-host-', url);
  // pnpm's settings for this host: its store inside the host (each build's addon is new
  // content: a shared store would keep every one); a dependency with an install script
  // fails the install rather than being skipped with a warning; the packages just published
  // are not held back by pnpm's minimum release age (nor written into this file as
  // exceptions, which would make `pnpm exec` re-verify the install). The registry is the
  // host's .npmrc's.
  writeFileSync(
    join(host, 'pnpm-workspace.yaml'),
    [
      'storeDir: ./.pnpm-store',
      'updateNotifier: false',
      'strictDepBuilds: true',
      'minimumReleaseAge: 0',
      'verifyDepsBeforeRun: false',
      '',
    ].join('\n'),
  );
  // npm's variables (`npm test` sets them) would configure pnpm too.
  const env = cleanEnv();
  await run(process.execPath, [PNPM, 'add', '--reporter=append-only', 'antigravity-acp-dsh', ...PINNED], {
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
