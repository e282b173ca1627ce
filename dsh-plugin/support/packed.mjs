/**
 * The installed package as a DSH host runs it: fresh host folders whose package manager
 * points at one registry only, the host scripts that mount the installed plugin (a text
 * turn through DSH's runtime, a text turn through DSH's own `boot()`, a tool turn across two
 * streams), and the package's binary (`doctor`, `status`). Shared by
 * `dsh-plugin/test/pack.test.mjs` and `ci/rehearse.sh`, so both exercise one path; the
 * rehearsal runs it as a command (on Node 22, whose `node` the children run on):
 *
 *   node support/packed.mjs check HOST LAUNCHER...    # in an installed host: the turns, the
 *                                                    # tool turn, doctor (--quick too) and status,
 *                                                    # through LAUNCHER (`npx --no`, or
 *                                                    # `NODE PNPM exec`); the addon must be linux-x64-gnu's package
 *   node support/packed.mjs wine-check HOST NODE_EXE FAKE_EXE   # a Windows Node under Wine:
 *                                                    # doctor --quick (no `fail` line, exit 0 or 2)
 *                                                    # and a text turn with the Windows fake
 *   node support/packed.mjs unsupported HOST PLATFORM ARCH LIBC   # the first adapter
 *                                                    # construction, the loader seeing PLATFORM-ARCH
 *                                                    # (LIBC `glibc`, `musl` or `-`), must fail
 *                                                    # ACP_PLATFORM_UNSUPPORTED naming both
 *
 * Exit codes: 0 every check held; 1 one failed (the assertion is printed); 64 usage.
 * @module support/packed
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { addonFile, packageName } from '../lib/binding-platform.js';
import { drain } from './checker.mjs';
import { LLM_VARIABLE } from './dsh-host.mjs';
import { fakeServer } from './fake.mjs';
import { brokenExpectations, callTurn, toolCallAnswers } from './journal.mjs';

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** The DSH packages a host installs beside the plugin (pinned as the plugin's devDependencies). */
export const HOST_PACKAGES = [
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
/**
 * `name@version` of each host package: dsh-llm at the run's version when
 * `ANTIGRAVITY_ACP_DSH_LLM` names one (`scripts/test.mjs` runs the suite on each DSH of
 * support/dsh-versions.mjs), the rest as pinned.
 */
const versions = { ...manifest.devDependencies, '@deepseek-ai/dsh-llm': process.env[LLM_VARIABLE] };
export const PINNED = HOST_PACKAGES.map((name) => `${name}@${versions[name] ?? manifest.devDependencies[name]}`);
/** pnpm, pinned in package-lock.json, run by its JS entry. */
export const PNPM = join(root, 'node_modules', 'pnpm', 'bin', 'pnpm.mjs');

/** What the fake says in every text turn. */
export const HELLO = 'Hello from the packed plugin.';
// The children find the fake's processes as the tests do (this helper uses node builtins only).
const FAKE_HELPER = pathToFileURL(join(root, 'support', 'fake.mjs')).href;

// What the children do once their turns streamed: dispose the plugin's scope, then, before
// exiting, assert that no fake process and no scratch directory of it is left (the process
// check needs /proc: a Windows Node is given no helper). A child's result goes to
// AGY_DSH_OUT when set (a Windows Node under Wine cannot write to a Linux pipe), else stdout.
const DISPOSED = `
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
export async function disposed(dispose, { fakeHelper, needle, scratchRoot }) {
  await dispose();
  if (fakeHelper) {
    const { livePids } = await import(fakeHelper);
    assert.deepEqual(livePids(needle), [], 'no fake process once the disposal settled');
  }
  assert.deepEqual(readdirSync(scratchRoot), [], 'no scratch directory once the disposal settled');
}
export function report(result) {
  if (process.env.AGY_DSH_OUT) writeFileSync(process.env.AGY_DSH_OUT, JSON.stringify(result));
  else console.log(JSON.stringify(result));
}
export async function started() {
  const { Context } = await import('@deepseek-ai/cordis');
  const { LlmRuntime } = await import('@deepseek-ai/dsh-llm');
  const ctx = new Context();
  ctx.plugin(LlmRuntime);
  for (let i = 0; ctx.get('llm') === undefined; i++) {
    if (i > 500) throw new Error('no llm service');
    await new Promise((r) => setTimeout(r, 10));
  }
  return ctx;
}
`;

const HOST = `
import { createUserMessage } from '@deepseek-ai/dsh-llm';
import plugin, { addonPath } from 'antigravity-acp-dsh';
import { disposed, report, started } from './disposed.mjs';
const { config, ...fake } = JSON.parse(process.env.AGY_DSH_CHILD);
const ctx = await started();
const fiber = ctx.plugin(plugin, config);
await fiber.await?.();
const chunks = [];
const message = createUserMessage({ content: [{ type: 'text', text: 'Please say hello' }], source: { kind: 'user' } });
for await (const chunk of ctx.llm.stream({ provider: 'antigravity-acp', model: 'server-default', messages: [message] })) chunks.push(chunk);
await disposed(() => fiber.dispose(), fake);
report({ addonPath: addonPath(), chunks });
`;

const BOOT = `
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { boot, loadOverlayPatches } from '@deepseek-ai/dsh-app-boot';
import { createUserMessage } from '@deepseek-ai/dsh-llm';
import { disposed, report } from './disposed.mjs';
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
report({ providers, chunks });
`;

// A tool turn as DSH's loop runs it: the first stream ends with the model's tool call, the
// host appends the model's message (DSH's BlockAssembler) and the tool's result, and streams again.
const TOOL = `
import { BlockAssembler, createToolResultMessage, createUserMessage } from '@deepseek-ai/dsh-llm';
import plugin from 'antigravity-acp-dsh';
import { disposed, report, started } from './disposed.mjs';
const { config, ...fake } = JSON.parse(process.env.AGY_DSH_CHILD);
const ctx = await started();
const fiber = ctx.plugin(plugin, config);
await fiber.await?.();
const tools = [{ name: 'echo', description: 'Echoes its text.', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }];
const request = (messages) => ({ provider: 'antigravity-acp', model: 'server-default', messages, tools });
const asked = createUserMessage({ content: [{ type: 'text', text: 'Please use the echo tool' }], source: { kind: 'user' } });
const first = [];
const assembler = new BlockAssembler();
for await (const chunk of ctx.llm.stream(request([asked]))) { first.push(chunk); assembler.push(chunk); }
const calls = assembler.blocks().filter((b) => b.type === 'tool-call');
const history = [asked, assembler.message({ kind: 'model', provider: 'antigravity-acp', model: 'server-default' })];
for (const call of calls) history.push(createToolResultMessage({ callId: call.id, content: [{ type: 'text', text: 'PROBE-9 echoed' }], isError: false }));
const second = [];
if (calls.length > 0) for await (const chunk of ctx.llm.stream(request(history))) second.push(chunk);
await disposed(() => fiber.dispose(), fake);
report({ first, second });
`;

/**
 * A fake that says hello and plays one echo tool turn; the caller removes it.
 * @returns {ReturnType<typeof fakeServer>}
 */
export function packedFake() {
  return fakeServer({
    turns: [
      { match: { prompt_contains: 'say hello' }, steps: [{ text: HELLO }] },
      callTurn({
        prompt: 'use the echo tool',
        tool: 'echo',
        args: { text: 'PROBE-9' },
        contains: 'PROBE-9 echoed',
        text: 'The tool said PROBE-9.',
      }),
    ],
  });
}

/**
 * A fresh DSH host folder (a `package.json`, and with `registry` a project `.npmrc` naming
 * that registry only); the caller removes it.
 * @param {string} prefix - the folder's name prefix in the temp folder.
 * @param {string} [registry] - the registry every install of this host uses.
 * @returns {string}
 */
export function freshHostDir(prefix, registry) {
  const host = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(host, 'package.json'), JSON.stringify({ name: 'dsh-host', private: true, type: 'module' }));
  const npmrc = ['legacy-peer-deps=true', ...(registry ? [`registry=${registry}`] : [])];
  writeFileSync(join(host, '.npmrc'), `${npmrc.join('\n')}\n`);
  return host;
}

/**
 * The environment without npm's own variables (`npm test`, `npm run` set them; they would
 * configure the host's npm or pnpm too).
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {NodeJS.ProcessEnv}
 */
export function cleanEnv(env = process.env) {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !/^npm_/i.test(name)));
}

/**
 * The platform package's addon an installed host loads: beside the main package's real path
 * (pnpm's virtual store), else in the host's node_modules (npm's flat tree).
 * @param {string} host
 * @param {string} tag
 * @returns {string}
 */
export function installedAddon(host, tag) {
  const main = realpathSync(join(host, 'node_modules', 'antigravity-acp-dsh'));
  const beside = join(dirname(main), packageName(tag), addonFile(tag));
  return existsSync(beside) ? beside : join(host, 'node_modules', packageName(tag), addonFile(tag));
}

/**
 * The child's environment: the plugin's config for `fake` (in the environment, not argv: the
 * children find the fake's processes by a path the config names, and must not find
 * themselves).
 * @param {ReturnType<typeof fakeServer>} fake
 */
function childEnv(fake) {
  const config = { server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow };
  return {
    ...process.env,
    AGY_DSH_CHILD: JSON.stringify({
      config,
      fakeHelper: FAKE_HELPER,
      needle: fake.scriptPath,
      scratchRoot: fake.scratchRoot,
    }),
  };
}

/** The last stdout line of a child, as JSON. @param {string} stdout */
const lastJson = (stdout) => JSON.parse(stdout.trim().split('\n').at(-1) ?? '');

/**
 * The host scripts in an installed host: the text turn through DSH's runtime (its addon must
 * be `expectedAddon`) and through DSH's `boot()` from the bundle patch, then the tool turn.
 * @param {string} host - the host folder, the plugin installed.
 * @param {ReturnType<typeof fakeServer>} fake - from `packedFake`.
 * @param {string} expectedAddon - the addon file the plugin must load (compared by real path).
 */
export async function runTurns(host, fake, expectedAddon) {
  writeFileSync(join(host, 'disposed.mjs'), DISPOSED);
  writeFileSync(join(host, 'host.mjs'), HOST);
  writeFileSync(join(host, 'boot.mjs'), BOOT);
  writeFileSync(join(host, 'tool.mjs'), TOOL);
  const env = childEnv(fake);
  const { stdout } = await run(process.execPath, ['host.mjs'], { cwd: host, env, timeout: 60_000 });
  const out = lastJson(stdout);
  const turn = await drain(out.chunks);
  assert.deepEqual(turn.finish, { kind: 'stop' });
  assert.deepEqual(turn.blocks, [{ type: 'text', text: HELLO }]);
  assert.equal(
    realpathSync(out.addonPath),
    realpathSync(expectedAddon),
    'the addon came from the installed platform package',
  );

  const booted = await run(process.execPath, ['boot.mjs'], { cwd: host, env, timeout: 60_000 });
  const viaLoader = lastJson(booted.stdout);
  assert.deepEqual(
    viaLoader.providers,
    [{ id: 'antigravity-acp', name: 'Google Antigravity (ACP)' }],
    "DSH's Loader mounted the bundle's row",
  );
  const bootTurn = await drain(viaLoader.chunks);
  assert.deepEqual(bootTurn.finish, { kind: 'stop' });
  assert.deepEqual(bootTurn.blocks, [{ type: 'text', text: HELLO }]);

  const tooled = await run(process.execPath, ['tool.mjs'], { cwd: host, env, timeout: 60_000 });
  const tool = lastJson(tooled.stdout);
  const first = await drain(tool.first);
  assert.deepEqual(first.finish, { kind: 'tool-calls' });
  assert.deepEqual(
    first.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]),
    [['echo', { text: 'PROBE-9' }]],
  );
  const second = await drain(tool.second);
  assert.deepEqual(second.finish, { kind: 'stop' });
  assert.equal(second.text, 'The tool said PROBE-9.');
  assert.deepEqual(
    toolCallAnswers(fake).map((a) => a.result.isError),
    [false],
    "the host's tool result reached the server",
  );
  assert.deepEqual(brokenExpectations(fake), []);
}

/**
 * The package's binary in an installed host, through the host's package manager (`npx` or
 * `pnpm exec`), on this Node (first on PATH, as DSH's own Node is where DSH runs): `doctor`
 * against the fake (the addon from the platform package `tag`, DSH found, signed in),
 * `doctor --quick --server FAKE` (no `fail` line, exit 0 or 2), and `status`.
 * @param {string} host - the host folder, the plugin installed.
 * @param {ReturnType<typeof fakeServer>} fake
 * @param {string[]} launcher - the command and arguments before the binary's name.
 * @param {NodeJS.ProcessEnv} [baseEnv] - the environment to start from.
 * @param {string} [tag] - the platform package the binary must load.
 */
export async function runBin(host, fake, launcher, baseEnv = process.env, tag = 'linux-x64-gnu') {
  const config = JSON.stringify({ server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow });
  const env = { ...baseEnv, PATH: `${dirname(process.execPath)}${delimiter}${baseEnv.PATH ?? ''}` };
  const [command, ...before] = launcher;
  const bin = (/** @type {string[]} */ args) =>
    run(command, [...before, 'antigravity-acp-dsh', ...args], { cwd: host, env, timeout: 60_000 }).catch(
      (error) => error,
    );
  const doctor = await bin(['doctor', '--json', '--config', config]);
  const report = JSON.parse(doctor.stdout);
  const check = (/** @type {string} */ id) => report.checks.find((/** @type {any} */ c) => c.id === id);
  assert.deepEqual(
    [check('platform').status, check('platform').brief],
    ['ok', packageName(tag)],
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
  const quick = await bin(['doctor', '--quick', '--server', fake.server.command]);
  assertQuickDoctor(quick.code ?? 0, `${quick.stdout}${quick.stderr}`);
  const status = await bin(['status', '--config', config]);
  assert.match(status.stdout, /^install: skip .*; sign-in: ok \(signed in\); confinement: /);
}

/**
 * `doctor --quick`'s verdict: no `fail` line, exit 0 (all ok) or 2 (warnings).
 * @param {number} code
 * @param {string} output - its stdout and stderr.
 */
function assertQuickDoctor(code, output) {
  const failed = output.split(/\r?\n/).filter((line) => /^\s*fail\b/.test(line));
  assert.deepEqual(failed, [], `doctor --quick shows no fail line:\n${output}`);
  assert.ok(code === 0 || code === 2, `doctor --quick exits 0 or 2, not ${code}:\n${output}`);
}

/**
 * A Windows path of a Linux one, through Wine.
 * @param {string} path
 */
const winPath = (path) => execFileSync('winepath', ['-w', path], { encoding: 'utf8' }).trim();

/**
 * The installed host on a Windows Node under Wine (`wine` on PATH, WINEPREFIX set:
 * ci/cross.sh's wine_env): `doctor --quick --server FAKE_EXE` and the text turn through DSH's
 * runtime with the Windows fake; the addon must be the win32-x64-gnu package's.
 * @param {string} host - the host folder, installed with `--os=win32 --cpu=x64`.
 * @param {string} nodeExe - the Windows node.exe.
 * @param {string} fakeExe - the Windows fake-antigravity.exe.
 */
export async function wineCheck(host, nodeExe, fakeExe) {
  const bin = join(host, 'node_modules', 'antigravity-acp-dsh', 'bin', 'antigravity-acp-dsh.js');
  const outFile = join(host, 'wine-out.txt');
  const wine = async (/** @type {string[]} */ args, /** @type {NodeJS.ProcessEnv} */ env = process.env) => {
    // Wine's Node cannot write to a Linux pipe (EBADF): its output goes to a file.
    const code = await new Promise((ok) => {
      const fd = openSync(outFile, 'w');
      const child = spawn('wine', [nodeExe, ...args], { cwd: host, env, stdio: ['ignore', fd, fd] });
      child.on('exit', (status) => {
        closeSync(fd);
        ok(status ?? 1);
      });
    });
    return { code: /** @type {number} */ (code), output: readFileSync(outFile, 'utf8') };
  };
  const quick = await wine([winPath(bin), 'doctor', '--quick', '--server', winPath(fakeExe)]);
  assertQuickDoctor(quick.code, quick.output);
  assert.match(quick.output, new RegExp(packageName('win32-x64-gnu')), 'doctor names the win32 package');

  const fake = packedFake();
  try {
    writeFileSync(join(host, 'disposed.mjs'), DISPOSED);
    writeFileSync(join(host, 'host.mjs'), HOST);
    const config = {
      server: {
        command: winPath(fakeExe),
        args: ['--script', winPath(fake.scriptPath), '--journal', winPath(fake.journalDir)],
      },
      scratchRoot: winPath(fake.scratchRoot),
    };
    const result = join(host, 'wine-result.json');
    const env = {
      ...process.env,
      AGY_DSH_CHILD: JSON.stringify({ config, scratchRoot: winPath(fake.scratchRoot) }),
      AGY_DSH_OUT: winPath(result),
    };
    const turned = await wine(['host.mjs'], env);
    assert.equal(turned.code, 0, `the Windows host's turn:\n${turned.output}`);
    const out = JSON.parse(readFileSync(result, 'utf8'));
    const turn = await drain(out.chunks);
    assert.deepEqual(turn.finish, { kind: 'stop' });
    assert.deepEqual(turn.blocks, [{ type: 'text', text: HELLO }]);
    assert.match(out.addonPath, /antigravity-acp-dsh-win32-x64-gnu[\\/]antigravity-acp-dsh\.win32-x64-gnu\.node$/);
  } finally {
    fake.remove();
  }
}

/**
 * The first adapter construction in an installed host, the loader seeing another platform
 * (Node's `process.platform`, `process.arch` and `process.report` redefined before the
 * package is imported): it must fail `ACP_PLATFORM_UNSUPPORTED`, naming the platform and the
 * package looked for.
 * @param {string} host - the host folder, installed as that platform would install it.
 * @param {string} platform - e.g. `freebsd`, `linux`.
 * @param {string} arch - e.g. `x64`.
 * @param {'glibc' | 'musl' | '-'} libc - on Linux, which C library the report says.
 */
export async function unsupported(host, platform, arch, libc) {
  const script = `
const define = (name, value) => Object.defineProperty(process, name, { value, configurable: true });
define('platform', ${JSON.stringify(platform)});
define('arch', ${JSON.stringify(arch)});
if (${JSON.stringify(libc)} !== '-') define('report', { excludeNetwork: false, getReport: () => ({ header: ${JSON.stringify(libc)} === 'glibc' ? { glibcVersionRuntime: '2.36' } : {} }) });
const { AntigravityAcpAdapter } = await import('antigravity-acp-dsh');
try {
  new AntigravityAcpAdapter(JSON.stringify({}));
  console.log(JSON.stringify({ constructed: true }));
} catch (error) {
  console.log(JSON.stringify({ code: error.code, message: error.message }));
}
`;
  writeFileSync(join(host, 'unsupported.mjs'), script);
  const { stdout } = await run(process.execPath, ['unsupported.mjs'], { cwd: host, env: cleanEnv(), timeout: 60_000 });
  const out = lastJson(stdout);
  const described = libc === '-' ? `${platform}-${arch}` : `${platform}-${arch}-${libc}`;
  const tag = `${platform}-${arch}${platform === 'linux' ? (libc === 'musl' ? '-musl' : '-gnu') : ''}`;
  assert.equal(out.code, 'ACP_PLATFORM_UNSUPPORTED', `the first construction's failure: ${JSON.stringify(out)}`);
  assert.ok(out.message.includes(described), `the message names the platform ${described}: ${out.message}`);
  assert.ok(
    out.message.includes(packageName(tag)),
    `the message names the package ${packageName(tag)}: ${out.message}`,
  );
  return out.message;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [command, host, ...rest] = process.argv.slice(2);
  try {
    if (command === 'check' && host && rest.length > 0) {
      const fake = packedFake();
      try {
        await runTurns(host, fake, installedAddon(host, 'linux-x64-gnu'));
        await runBin(host, fake, rest, cleanEnv());
      } finally {
        fake.remove();
      }
      console.log(`ok: ${host}: text turns (runtime, boot), a tool turn, doctor, doctor --quick, status`);
    } else if (command === 'wine-check' && host && rest.length === 2) {
      await wineCheck(host, rest[0], rest[1]);
      console.log(`ok: ${host}: doctor --quick and a text turn on the Windows Node`);
    } else if (command === 'unsupported' && host && rest.length === 3) {
      const message = await unsupported(host, rest[0], rest[1], /** @type {any} */ (rest[2]));
      console.log(`ok: ACP_PLATFORM_UNSUPPORTED: ${message}`);
    } else {
      process.stderr.write(
        'usage: node packed.mjs check HOST LAUNCHER... | wine-check HOST NODE_EXE FAKE_EXE | unsupported HOST PLATFORM ARCH LIBC\n',
      );
      process.exitCode = 64;
    }
  } catch (error) {
    process.stderr.write(`${/** @type {Error} */ (error).stack ?? error}\n`);
    process.exitCode = 1;
  }
}
