// The `antigravity-acp-dsh` binary's install path, its config flags, `login --wait`, and the
// sign-in URL kept to the user's terminal (issue 37 §2), run as a user runs it (support/cli.mjs) against the
// real fake. The install is the pinned build's as the install scenarios serve it: a real
// ZIP whose server member starts the fake, and its agent index, on loopback
// (support/served-install.mjs). `doctor --install` installs and repairs; `doctor` hashes
// every installed file; `status` runs the quick check every launch runs (size, mode and
// file identity, hashing only a file whose identity changed), so a file changed with its
// identity kept fails `doctor` and not `status`, which is what a launch would do too.
// The config: `--config-file`, then `--config`, then the flags, each later one winning
// field by field wherever it stands on the command line; `--server` replaces the whole
// `server` (args and env with it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { cli, expectedExit, nothingLeft, start, userEnv } from '../support/cli.mjs';
import { fakeServer } from '../support/fake.mjs';
import { HARNESS_MEMBER, servedInstall, servedInstallRuns } from '../support/served-install.mjs';
import { within } from '../support/wait.mjs';

const SHELL_MEMBER = !servedInstallRuns && 'the archive server member is a shell script';

/** A check of a `--json` report, by id. */
const check = (report, id) => report.checks.find((c) => c.id === id);

/**
 * Runs `doctor --json` (or `status --json`) and reads its report.
 * @param {string[]} args - the command and its flags, `--json` added.
 */
async function reported(args, options) {
  const run = await cli([...args, '--json'], options);
  let report;
  try {
    report = JSON.parse(run.stdout);
  } catch {
    assert.fail(`${args[0]} --json printed no report (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
  return { ...run, report };
}

/**
 * A served install, installed by `doctor --install` (asserted ok, one download).
 * @param {import('node:test').TestContext} t
 */
async function installed(t, script = {}) {
  const served = await servedInstall(t, script);
  const args = ['--config', JSON.stringify(served.config)];
  const first = await reported(['doctor', '--install', ...args]);
  assert.equal(check(first.report, 'install').status, 'ok', first.stdout);
  assert.equal(served.hits(), 1);
  const current = join(served.cacheDir, 'current');
  return { ...served, args, current, harness: join(current, HARNESS_MEMBER) };
}

/**
 * Changes a file's first byte in place, keeping its size, mode, inode and mtime to the
 * nanosecond (`touch -r`, through a reference file): what only hashing can find.
 * @param {string} file
 * @param {string} scratch - a folder for the reference file.
 */
function changeKeepingIdentity(file, scratch) {
  const before = statSync(file, { bigint: true });
  const reference = join(scratch, 'mtime-reference');
  const touch = (from, to) => assert.equal(spawnSync('touch', ['-r', from, to]).status, 0, `touch -r ${from} ${to}`);
  touch(file, reference);
  flipFirstByte(file);
  touch(reference, file);
  const after = statSync(file, { bigint: true });
  assert.deepEqual(
    [after.size, after.mode, after.ino, after.dev, after.mtimeNs],
    [before.size, before.mode, before.ino, before.dev, before.mtimeNs],
    'the change kept the file identity the quick check compares',
  );
}

/** Writes a different first byte into `file`, in place. */
function flipFirstByte(file) {
  const first = readFileSync(file)[0];
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, Buffer.from([first ^ 0xff]), 0, 1, 0);
  } finally {
    closeSync(fd);
  }
}

test('doctor --install on an empty cache installs the pinned server, hashes it and signs in through it (exit 2: warnings only)', {
  skip: SHELL_MEMBER,
}, async (t) => {
  const { fake, config, cacheDir, hits } = await servedInstall(t);
  assert.deepEqual(readdirSync(cacheDir), [], 'nothing is installed yet');
  const { code, report, stderr } = await reported(['doctor', '--install', '--config', JSON.stringify(config)]);
  const install = check(report, 'install');
  assert.equal(install.status, 'ok', JSON.stringify(install));
  assert.equal(install.brief, 'installed');
  assert.ok(install.detail.includes(join(cacheDir, 'current')), install.detail);
  assert.match(install.detail, /every file hashed against its receipt/);
  assert.equal(hits(), 1, 'one download');
  assert.match(stderr, /installed the pinned server/);
  // The config names no server: the fake that answered was launched from the install.
  assert.equal(check(report, 'signIn').status, 'ok');
  assert.deepEqual(fake.methods(), ['initialize', 'session/new']);
  // confinement: off warns, and nothing fails: exit 2, as --help documents.
  assert.equal(check(report, 'confinement').status, 'warn');
  assert.ok(!report.checks.some((c) => c.status === 'fail'), JSON.stringify(report.checks));
  assert.equal(report.exitCode, expectedExit(report.checks));
  assert.equal(code, 2);
  await nothingLeft(fake);
});

test('an intact install: doctor hashes every file and says ok, status says so in one line, and nothing is downloaded again', {
  skip: SHELL_MEMBER,
}, async (t) => {
  const { fake, args, current, hits, indexHits } = await installed(t);
  const doctor = await reported(['doctor', ...args]);
  const install = check(doctor.report, 'install');
  assert.equal(install.status, 'ok');
  assert.ok(install.detail.includes(current), install.detail);
  assert.match(install.detail, /every file hashed against its receipt/);
  assert.equal(doctor.code, 2, 'confinement off warns; nothing fails');
  const status = await cli(['status', ...args]);
  assert.equal(status.stdout, 'install: ok (installed); sign-in: ok (signed in); confinement: warn (off)\n');
  assert.equal(status.code, 2);
  const quick = check((await reported(['status', ...args])).report, 'install');
  assert.match(quick.detail, /its receipt, sizes, modes and file identities checked/, 'status runs the quick check');
  assert.deepEqual([hits(), indexHits()], [1, 1], 'neither doctor nor status downloads');
  await nothingLeft(fake);
});

test('one installed file changed with its size, mode and mtime kept: doctor fails naming it (exit 1); status, the quick check a launch runs, trusts it', {
  skip: SHELL_MEMBER,
}, async (t) => {
  const { fake, args, current, harness } = await installed(t);
  changeKeepingIdentity(harness, fake.dir);
  const before = fake.methods().length;
  const { code, report } = await reported(['doctor', ...args]);
  const install = check(report, 'install');
  assert.equal(install.status, 'fail', JSON.stringify(install));
  assert.equal(install.brief, 'broken');
  assert.ok(install.detail.includes(current), install.detail);
  assert.ok(install.detail.includes(`\`${HARNESS_MEMBER}\` does not match its SHA-256`), install.detail);
  assert.match(install.fix, /antigravity-acp-dsh doctor --install/);
  assert.equal(check(report, 'signIn').status, 'skip', 'no server starts from a broken install');
  assert.equal(code, 1);
  assert.equal(report.exitCode, 1);
  const text = await cli(['doctor', ...args]);
  assert.match(text.stdout, new RegExp(`^fail  install .*\`${HARNESS_MEMBER}\` does not match its SHA-256`, 'm'));
  assert.match(text.stdout, /\(exit 1\)\n$/);
  assert.equal(text.code, 1);
  assert.equal(fake.methods().length, before, 'doctor started no server');
  // status is what a launch checks: size, mode and file identity, all kept here.
  const status = await cli(['status', ...args]);
  assert.match(status.stdout, /^install: ok \(installed\); sign-in: ok/);
  assert.equal(status.code, 2);
  await nothingLeft(fake);
});

test('one installed file changed in the ordinary way (its mtime moved): status hashes it and fails naming it, exit 1, starting no server', {
  skip: SHELL_MEMBER,
}, async (t) => {
  const { fake, args, harness } = await installed(t);
  flipFirstByte(harness);
  const before = fake.methods().length;
  const { code, stdout } = await cli(['status', ...args]);
  assert.equal(stdout, 'install: fail (broken); sign-in: skip (not checked); confinement: warn (off)\n');
  assert.equal(code, 1);
  const { report } = await reported(['status', ...args]);
  assert.ok(check(report, 'install').detail.includes(`\`${HARNESS_MEMBER}\` does not match its SHA-256`));
  assert.equal(fake.methods().length, before, 'status started no server');
});

test('doctor --install repairs what doctor found broken (downloaded again), and doctor then says ok', {
  skip: SHELL_MEMBER,
}, async (t) => {
  const { fake, args, harness, hits } = await installed(t);
  const intact = readFileSync(harness);
  changeKeepingIdentity(harness, fake.dir);
  assert.equal(check((await reported(['doctor', '--quick', ...args])).report, 'install').status, 'fail');
  const repair = await reported(['doctor', '--install', ...args]);
  assert.equal(check(repair.report, 'install').status, 'ok', repair.stdout);
  assert.match(repair.stderr, new RegExp(`repairing the install: \`${HARNESS_MEMBER}\` does not match its SHA-256`));
  assert.match(repair.stderr, /repaired: the pinned server is installed/);
  assert.equal(hits(), 2, 'the repair downloaded the archive again');
  assert.equal(repair.code, 2);
  assert.deepEqual(readFileSync(harness), intact, 'the file is the archive’s again');
  const after = await reported(['doctor', ...args]);
  assert.equal(check(after.report, 'install').status, 'ok');
  assert.equal(check(after.report, 'signIn').status, 'ok');
  assert.equal(after.code, 2);
  assert.equal(hits(), 2);
  await nothingLeft(fake);
});

/**
 * Writes `config` as a `--config-file`.
 * @returns {string[]} the flag and its path.
 */
function configFile(dir, config, name = 'config.json') {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(config));
  return ['--config-file', path];
}

/**
 * A fake for `script`, removed after the test, and a `--config-file` naming it (its
 * server, what it may reach, its scratch root) with `config`'s fields beside.
 * @returns {{fake: ReturnType<typeof fakeServer>, file: string[]}}
 */
function fakeWithFile(t, script, config) {
  const fake = fakeServer(script);
  t.after(() => fake.remove());
  const file = configFile(fake.dir, { server: fake.server, ...fake.allow, scratchRoot: fake.scratchRoot, ...config });
  return { fake, file };
}

test('--cache-dir and --registry name where doctor --install installs from and to, over a --config-file that disagrees', {
  skip: SHELL_MEMBER,
}, async (t) => {
  const { fake, config, registry, cacheDir, indexHits } = await servedInstall(t);
  const flagged = join(fake.dir, 'flag-cache');
  // The file names the served cache and a registry nothing listens on; the flags win.
  const file = configFile(fake.dir, { ...config, registry: 'http://127.0.0.1:9/agents.json' });
  const { code, report } = await reported([
    'doctor',
    '--install',
    '--quick',
    ...file,
    '--cache-dir',
    flagged,
    '--registry',
    registry,
  ]);
  const install = check(report, 'install');
  assert.equal(install.status, 'ok', JSON.stringify(install));
  assert.ok(install.detail.includes(join(flagged, 'current')), install.detail);
  assert.ok(existsSync(join(flagged, 'current', 'receipt.json')), 'installed under --cache-dir');
  assert.deepEqual(readdirSync(cacheDir), [], "nothing in the file's cacheDir");
  assert.equal(indexHits(), 1, "the agent index came from --registry's host");
  assert.equal(code, 2);
  // A flag before --config-file on the command line still wins.
  const before = await reported(['doctor', '--quick', '--cache-dir', flagged, ...file]);
  assert.equal(check(before.report, 'install').status, 'ok');
});

test('--server with repeated --server-arg runs that command (winning over the file and --config); --server-arg alone is refused', async (t) => {
  const fake = fakeServer({});
  t.after(() => fake.remove());
  const serverArgs = fake.server.args.map((arg) => `--server-arg=${arg}`);
  const flags = ['--server', fake.server.command, ...serverArgs, '--scratch-root', fake.scratchRoot];
  const elsewhere = { command: join(fake.dir, 'no-such-server'), args: ['--never'] };
  const file = configFile(fake.dir, { server: elsewhere, confinement: 'off' });
  const inline = ['--config', JSON.stringify({ server: elsewhere })];
  const { code, stdout } = await cli(['status', ...flags, ...file, ...inline]);
  assert.match(
    stdout,
    /^install: skip \(explicit server command\); sign-in: ok \(signed in\); confinement: warn \(off\)\n$/,
  );
  assert.equal(code, 2);
  assert.deepEqual(fake.methods(), ['initialize', 'session/new'], "the flags' command, with its arguments, answered");
  await nothingLeft(fake);
  const alone = await cli(['status', '--server-arg=--x', ...file]);
  assert.equal(alone.code, 64);
  assert.match(alone.stderr, /--server-arg needs --server/);
  // An argument that starts with a dash is given as --server-arg=ARG (the command line
  // cannot tell it from a flag otherwise), as --help says.
  const dashed = await cli(['status', '--server', fake.server.command, '--server-arg', '--script']);
  assert.equal(dashed.code, 64);
  assert.match(dashed.stderr, /--server-arg=/);
  assert.equal(fake.pids().length, 0);
});

test('--scratch-root names where sessions and their leftovers are kept, over the --config-file and --config values', async (t) => {
  const fake = fakeServer({});
  t.after(() => fake.remove());
  const other = join(fake.dir, 'other-scratch');
  mkdirSync(other);
  const file = configFile(fake.dir, { server: fake.server, ...fake.allow, scratchRoot: other });
  const inline = ['--config', JSON.stringify({ scratchRoot: other })];
  const { code, report } = await reported(['doctor', ...file, ...inline, '--scratch-root', fake.scratchRoot]);
  const leftovers = check(report, 'leftovers');
  assert.equal(leftovers.detail, `no sessions of ended processes are left in ${fake.scratchRoot}`);
  assert.equal(check(report, 'signIn').status, 'ok');
  assert.notEqual(code, 1);
  // --config alone wins over the file.
  const inlineWins = await reported([
    'doctor',
    '--quick',
    ...file,
    '--config',
    JSON.stringify({ scratchRoot: fake.scratchRoot }),
  ]);
  assert.ok(check(inlineWins.report, 'leftovers').detail.endsWith(fake.scratchRoot));
  await nothingLeft(fake);
});

test('--confinement sets the mode status reports, over the --config-file value; a mode it does not know exits 64', async (t) => {
  const { fake, file } = fakeWithFile(t, {}, { confinement: 'required' });
  const off = await reported(['status', ...file, '--confinement', 'off']);
  const confinement = check(off.report, 'confinement');
  assert.deepEqual([confinement.status, confinement.brief], ['warn', 'off'], JSON.stringify(confinement));
  const fromFile = check((await reported(['status', ...file])).report, 'confinement');
  assert.notEqual(fromFile.brief, 'off', 'without the flag the file says required');
  const unknown = await cli(['status', ...file, '--confinement', 'sometimes']);
  assert.equal(unknown.code, 64);
  assert.match(unknown.stderr, /`sometimes`, expected one of `required`, `best_effort`, `off`.*ACP_INVALID_CONFIG/);
  await nothingLeft(fake);
});

test('--auth-method is the method doctor asks the user to sign in with, over the --config-file value', async (t) => {
  const { fake, file } = fakeWithFile(
    t,
    { auth: 'required', initialize: { auth_methods: ['oauth-personal', 'oauth-business'] } },
    { authMethod: 'oauth-personal' },
  );
  // GEMINI_HOME empty: no settings.json of this machine's user names a method.
  const home = join(fake.dir, 'home');
  mkdirSync(home);
  const env = userEnv({ GEMINI_HOME: home });
  const { code, report } = await reported(['doctor', ...file, '--auth-method', 'oauth-business'], { env });
  const signIn = check(report, 'signIn');
  assert.match(signIn.detail, /authMethod is oauth-business$/);
  assert.equal(signIn.fix, 'antigravity-acp-dsh login --method oauth-business');
  assert.equal(code, 1);
  const unknown = await cli(['doctor', '--quick', ...file, '--auth-method', 'password'], { env });
  assert.equal(unknown.code, 64);
  await nothingLeft(fake);
});

test('--provider is the route models lists for, over the --config-file value; an empty one exits 64 naming it', async (t) => {
  // The file's route is refused (empty): only the flag's makes the command run.
  const { fake, file } = fakeWithFile(t, { models: ['gemini-a'] }, { provider: '' });
  const refused = await cli(['models', ...file]);
  assert.equal(refused.code, 64);
  assert.match(refused.stderr, /`provider` must not be empty/);
  const { code, stdout } = await cli(['models', ...file, '--provider', 'agy']);
  assert.equal(code, 0, stdout);
  assert.match(stdout, /^server-default .*\ngemini-a /);
  const empty = await cli(['models', '--config', JSON.stringify({ server: fake.server }), '--provider=']);
  assert.equal(empty.code, 64);
  assert.match(empty.stderr, /`provider` must not be empty/);
  await nothingLeft(fake);
});

test('--config-file: a whole config row is read, one that cannot be read or is not JSON exits 64 starting nothing, and --help says which source wins', async (t) => {
  const fake = fakeServer({});
  t.after(() => fake.remove());
  const row = configFile(fake.dir, {
    id: 'llm-antigravity-acp',
    name: 'antigravity-acp-dsh',
    config: { server: fake.server, ...fake.allow, scratchRoot: fake.scratchRoot },
  });
  const { code, stdout } = await cli(['status', ...row]);
  assert.match(stdout, /sign-in: ok/);
  assert.notEqual(code, 1);
  const missing = await cli(['status', '--config-file', join(fake.dir, 'absent.json')]);
  assert.equal(missing.code, 64);
  assert.match(missing.stderr, /--config-file: cannot read it \(ENOENT\)/);
  const notJson = join(fake.dir, 'config.txt');
  writeFileSync(notJson, 'server: fake');
  const garbled = await cli(['status', '--config-file', notJson]);
  assert.equal(garbled.code, 64);
  assert.match(garbled.stderr, /--config-file is not JSON/);
  assert.equal(fake.journal().length, 1, 'only the row started a server');
  await nothingLeft(fake);
  const help = await cli(['--help']);
  assert.match(
    help.stdout,
    /--config wins over\n--config-file, and each flag below wins over both, wherever it stands on the line/,
  );
});

test('login --wait: a sign-in not completed in time ends the login (exit 1) after the wait, its server disposed of', async (t) => {
  const fake = fakeServer({ auth: 'required', sign_in: { flow: 'browser', wait_ms: 60000 } });
  t.after(() => fake.remove());
  const config = ['--config', JSON.stringify({ server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow })];
  const run = start(['login', '--wait', '1', ...config]);
  t.after(() => run.child.kill());
  const startedAt = Date.now();
  // The default wait is 600 s; the fake waits 60 s for its browser: only --wait ends it.
  const code = await within(run.exit, 'the login to end after its 1 s wait', 20_000);
  assert.equal(code, 1);
  assert.ok(Date.now() - startedAt >= 1000, 'it waited the second');
  assert.match(run.stderr, /Waiting up to 1 s for the sign-in to complete/);
  assert.equal(
    run.stdout,
    'not signed in (ACP_AUTH_REQUIRED): the sign-in was not completed within 1 s; run login again and complete it in the browser\n',
  );
  assert.deepEqual(fake.methods(), ['initialize', 'authenticate', '$/cancel_request'], 'the sign-in was cancelled');
  await nothingLeft(fake);
  for (const wait of ['0', '1.5', 'soon']) {
    const refused = await cli(['login', '--wait', wait, ...config]);
    assert.equal(refused.code, 64, `--wait ${wait}`);
    assert.match(refused.stderr, /--wait takes a whole number of seconds, at least 1/);
  }
  assert.equal(fake.journal().length, 1, 'a refused --wait starts nothing');
});

/**
 * Every file under `dir`, recursively, with its bytes as latin1 text.
 * @returns {[string, string][]}
 */
function filesUnder(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(path));
    else if (entry.isFile()) found.push([path, readFileSync(path, 'latin1')]);
  }
  return found;
}

test('the sign-in URL is shown on the login’s stderr only: in no file the adapter or the server wrote, not in any output of login, doctor or status', async (t) => {
  const fake = fakeServer({ auth: 'required', sign_in: { flow: 'browser', wait_ms: 20000, browser_completes: true } });
  t.after(() => fake.remove());
  // The server's home, the cache and the scratch root inside the test's folder, so every
  // file anything wrote is read back below.
  const home = join(fake.dir, 'home');
  mkdirSync(home);
  const env = userEnv({ GEMINI_HOME: home });
  const config = {
    server: fake.server,
    scratchRoot: fake.scratchRoot,
    cacheDir: join(fake.dir, 'cache'),
    ...fake.allow,
  };
  const args = ['--config', JSON.stringify(config)];
  const login = await cli(['login', ...args], { env });
  assert.equal(login.code, 0, `${login.stdout}${login.stderr}`);
  const url = login.stderr.match(/https:\/\/accounts\.google\.com\/\S+/)?.[0];
  assert.ok(url, `the URL on stderr:\n${login.stderr}`);
  const state = new URL(url).searchParams.get('state');
  assert.ok(state && state.length >= 16, `the flow's state: ${state}`);
  assert.deepEqual(fake.methods(), ['initialize', 'authenticate', 'session/new']);
  const json = await cli(['login', '--json', ...args], { env });
  assert.equal(json.code, 0);
  const secondState = new URL(json.stderr.match(/https:\/\/accounts\.google\.com\/\S+/)[0]).searchParams.get('state');
  const outputs = {
    'login stdout': login.stdout,
    'login --json stdout': json.stdout,
    doctor: await cli(['doctor', ...args], { env }),
    'doctor --json': await cli(['doctor', '--json', ...args], { env }),
    status: await cli(['status', ...args], { env }),
    'status --json': await cli(['status', '--json', ...args], { env }),
  };
  await nothingLeft(fake);
  for (const [what, output] of Object.entries(outputs)) {
    const text = typeof output === 'string' ? output : `${output.stdout}${output.stderr}`;
    for (const secret of [state, secondState]) assert.ok(!text.includes(secret), `the URL is in ${what}:\n${text}`);
  }
  const written = filesUnder(fake.dir);
  // What was read: the fake's journals and its stderr copies, the server's home, the
  // scratch root's and the cache's leftovers (if any).
  assert.ok(
    written.some(([path]) => path.endsWith('.stderr')),
    "the fake's stderr copy was read",
  );
  assert.ok(written.filter(([path]) => path.endsWith('.jsonl')).length >= 6, 'every journal was read');
  for (const [path, text] of written)
    for (const secret of [state, secondState]) assert.ok(!text.includes(secret), `the URL is in ${path}`);
});
