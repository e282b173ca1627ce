// The `antigravity-acp-dsh` binary (bin/), run as a user runs it (the test's Node, from the
// package root, where DSH's packages resolve) against the real fake server: each command's
// output, `--json` shape and exit code, what crossed the wire (the fake's journal), and
// that nothing it started is left behind. `logout` against a server that does not
// advertise it uses the fake's `initialize.logout: false`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, expectedExit, nothingLeft, start, userEnv } from '../support/cli.mjs';
import { fakeServer } from '../support/fake.mjs';
import { eventually, within } from '../support/wait.mjs';

const CHECK_IDS = ['platform', 'node', 'dsh', 'install', 'confinement', 'signIn', 'bridge', 'leftovers'];
const STATUSES = new Set(['ok', 'warn', 'fail', 'skip']);

/** A fake for `script`, removed after the test, and the `--config` that names it. */
function fakeFor(t, script = {}, config = {}) {
  const fake = fakeServer(script);
  t.after(() => fake.remove());
  const json = JSON.stringify({ server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow, ...config });
  return { fake, config: ['--config', json] };
}

test('doctor against a signed-in server: every check, the sign-in ok after one session/new, and nothing left', async (t) => {
  const { fake, config } = fakeFor(t);
  const { code, stdout } = await cli(['doctor', ...config]);
  const lines = stdout.trimEnd().split('\n');
  const last = lines.at(-1);
  assert.match(last, /^doctor: \d+ ok, \d+ warnings?, 0 failed, \d+ skipped \(exit (0|2)\)$/);
  assert.equal(code, Number(last.match(/\(exit (\d)\)/)[1]), 'the exit code is the one the report names');
  // An addon named by ANTIGRAVITY_ACP_DSH_ADDON (the Windows leg's) is reported, and warns.
  const platform = process.env.ANTIGRAVITY_ACP_DSH_ADDON ? 'warn' : 'ok';
  for (const [label, status] of [
    ['platform', platform],
    ['node', 'ok'],
    ['dsh', 'ok'],
    ['install', 'skip'],
    ['sign-in', 'ok'],
    ['bridge', 'ok'],
    ['leftovers', 'ok'],
  ]) {
    assert.ok(
      lines.some((line) => line.startsWith(status.padEnd(4)) && line.slice(6).startsWith(label)),
      `${status} ${label}:\n${stdout}`,
    );
  }
  assert.deepEqual(fake.methods(), ['initialize', 'session/new'], 'doctor opened one session and prompted nothing');
  await nothingLeft(fake);
});

test('doctor --json: the checks, their counts and the exit code, in the documented shape', async (t) => {
  const { config } = fakeFor(t);
  const { code, stdout } = await cli(['doctor', '--json', ...config]);
  const report = JSON.parse(stdout);
  assert.deepEqual(Object.keys(report).sort(), ['checks', 'command', 'counts', 'exitCode']);
  assert.equal(report.command, 'doctor');
  assert.deepEqual(
    report.checks.map((c) => c.id),
    CHECK_IDS,
  );
  for (const check of report.checks) {
    assert.deepEqual(Object.keys(check).sort(), ['brief', 'detail', 'fix', 'id', 'status']);
    assert.ok(STATUSES.has(check.status), check.status);
    assert.equal(typeof check.detail, 'string');
    assert.ok(check.fix === null || typeof check.fix === 'string');
    if (check.status === 'warn' || check.status === 'fail') assert.ok(check.fix, `${check.id} says how to mend it`);
  }
  const counts = { ok: 0, warn: 0, fail: 0, skip: 0 };
  for (const check of report.checks) counts[check.status] += 1;
  assert.deepEqual(report.counts, counts);
  assert.equal(report.exitCode, expectedExit(report.checks));
  assert.equal(code, report.exitCode);
  assert.equal(report.checks.find((c) => c.id === 'signIn').status, 'ok');
});

test('doctor fails (exit 1) on a server that exits at once, naming its code; --quick starts no server', async (t) => {
  const scratch = fakeServer({});
  t.after(() => scratch.remove());
  const server = { command: process.execPath, args: ['-e', 'process.exit(3)'] };
  const config = ['--config', JSON.stringify({ server, scratchRoot: scratch.scratchRoot })];
  const { code, stdout } = await cli(['doctor', '--json', ...config]);
  const report = JSON.parse(stdout);
  assert.equal(code, 1);
  assert.equal(report.exitCode, 1);
  const signIn = report.checks.find((c) => c.id === 'signIn');
  assert.equal(signIn.status, 'fail');
  assert.match(signIn.detail, /ACP_DISCONNECTED/);
  assert.ok(signIn.fix);
  const quick = await cli(['doctor', '--quick', '--json', ...config]);
  const quickReport = JSON.parse(quick.stdout);
  assert.equal(quickReport.checks.find((c) => c.id === 'signIn').status, 'skip');
  assert.equal(quick.code, expectedExit(quickReport.checks));
  assert.notEqual(quick.code, 1);
  assert.deepEqual(scratch.scratchLeft(), []);
});

test('doctor never downloads: a missing install fails with the fix `doctor --install`, and no server starts', async (t) => {
  const fake = fakeServer({});
  t.after(() => fake.remove());
  const cacheDir = join(fake.dir, 'cache');
  // Nothing listens on port 9: an install that asked the registry would fail otherwise.
  const config = { cacheDir, registry: 'https://127.0.0.1:9/agents.json', scratchRoot: fake.scratchRoot };
  const { code, stdout } = await cli(['doctor', '--json', '--config', JSON.stringify(config)]);
  const report = JSON.parse(stdout);
  const install = report.checks.find((c) => c.id === 'install');
  assert.equal(install.status, 'fail');
  assert.equal(install.brief, 'not installed');
  assert.match(install.fix, /antigravity-acp-dsh doctor --install/);
  assert.equal(report.checks.find((c) => c.id === 'signIn').status, 'skip');
  assert.equal(code, 1);
  assert.deepEqual(fake.scratchLeft(), [], 'no server was started');
});

test('doctor on a server that needs a sign-in: sign-in needed with the methods, never an authenticate', async (t) => {
  const { fake, config } = fakeFor(t, {
    auth: 'required',
    initialize: { auth_methods: ['oauth-personal', 'gemini-api-key'] },
  });
  const { code, stdout } = await cli(['doctor', '--json', ...config]);
  const signIn = JSON.parse(stdout).checks.find((c) => c.id === 'signIn');
  assert.equal(signIn.status, 'fail');
  assert.equal(signIn.brief, 'sign-in needed');
  assert.match(signIn.detail, /offers oauth-personal, gemini-api-key/);
  assert.equal(signIn.fix, 'antigravity-acp-dsh login --method oauth-personal');
  assert.equal(code, 1);
  assert.deepEqual(fake.methods(), ['initialize', 'session/new'], 'doctor does not sign in');
  await nothingLeft(fake);
});

test("doctor counts the sessions ended processes left, and --clean sweeps them (a live owner's stays)", async (t) => {
  const { fake, config } = fakeFor(t);
  const home = join(fake.dir, 'home');
  const ledger = join(fake.scratchRoot, 'antigravity-acp-deadbe.sessions');
  writeFileSync(ledger, `home ${home}\nsession 11111111-2222-3333-4444-555555555555\n`);
  mkdirSync(join(fake.scratchRoot, 'antigravity-acp-deadbe'));
  const counted = JSON.parse((await cli(['doctor', '--quick', '--json', ...config])).stdout);
  const before = counted.checks.find((c) => c.id === 'leftovers');
  assert.equal(before.status, 'warn');
  assert.match(before.detail, /1 ledger\(s\) of ended processes .* 1 session\(s\)/);
  assert.match(before.fix, /doctor --clean/);
  assert.ok(existsSync(ledger), 'counting removes nothing');
  const cleaned = JSON.parse((await cli(['doctor', '--quick', '--clean', '--json', ...config])).stdout);
  const after = cleaned.checks.find((c) => c.id === 'leftovers');
  assert.equal(after.status, 'ok');
  assert.match(after.detail, /swept 1 ledger\(s\)/);
  assert.deepEqual(fake.scratchLeft(), []);
});

test('status prints one line (install, sign-in, confinement) and exits as doctor does', async (t) => {
  const signedIn = fakeFor(t);
  const ok = await cli(['status', ...signedIn.config]);
  assert.equal(ok.stdout.split('\n').length, 2, 'one line');
  assert.match(
    ok.stdout,
    /^install: skip \(explicit server command\); sign-in: ok \(signed in\); confinement: (ok|warn) \(.+\)\n$/,
  );
  assert.equal(ok.code, ok.stdout.includes('confinement: warn') ? 2 : 0);
  const signedOut = fakeFor(t, { auth: 'required' });
  const needed = await cli(['status', ...signedOut.config]);
  assert.match(needed.stdout, /sign-in: fail \(sign-in needed\)/);
  assert.equal(needed.code, 1);
  await nothingLeft(signedOut.fake);
});

test("models prints discovery's list, server-default first, and --json the same list", async (t) => {
  const { fake, config } = fakeFor(t, { models: ['gemini-a', 'gemini-b'] });
  const { code, stdout } = await cli(['models', ...config]);
  assert.equal(code, 0);
  assert.deepEqual(
    stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split(/\s+/)[0]),
    ['server-default', 'gemini-a', 'gemini-b'],
  );
  const json = await cli(['models', '--json', ...config]);
  const report = JSON.parse(json.stdout);
  assert.equal(report.exitCode, 0);
  assert.deepEqual(
    report.models.map((m) => m.id),
    ['server-default', 'gemini-a', 'gemini-b'],
  );
  assert.equal(report.error, null);
  await nothingLeft(fake);
});

test('logout sends ACP logout to a server that advertises it', async (t) => {
  const { fake, config } = fakeFor(t);
  const { code, stdout } = await cli(['logout', ...config]);
  assert.equal(code, 0);
  assert.match(stdout, /^signed out/);
  assert.deepEqual(fake.methods(), ['initialize', 'logout']);
  await nothingLeft(fake);
});

test('logout to a server that does not advertise it sends nothing, says so, and exits 1', async (t) => {
  // The fake with `initialize.logout: false`: no `auth.logout` in its capabilities.
  const { fake, config } = fakeFor(t, { initialize: { logout: false } });
  const { code, stdout } = await cli(['logout', '--json', ...config]);
  const report = JSON.parse(stdout);
  assert.equal(code, 1);
  assert.equal(report.advertised, false);
  assert.equal(report.signedOut, false);
  assert.match(report.error.message, /does not advertise logout/);
  assert.deepEqual(fake.methods(), ['initialize'], 'no logout was sent');
  await nothingLeft(fake);
});

test('login: the sign-in URL on stderr only, the ssh -L forward in an SSH session without a display; the browser completes it', {
  skip: process.platform === 'win32' && "under Wine the test's fetch cannot reach the Windows fake's loopback redirect",
}, async (t) => {
  const { fake, config } = fakeFor(t, { auth: 'required', sign_in: { flow: 'browser', wait_ms: 20000 } });
  const run = start(['login', '--json', ...config], {
    env: userEnv({ SSH_CONNECTION: '10.1.1.1 50000 10.2.2.2 2222', USER: 'ana' }),
  });
  t.after(() => run.child.kill());
  const url = await eventually(
    () => run.stderr.match(/https:\/\/accounts\.google\.com\/\S+/)?.[0],
    'the sign-in URL on stderr',
  );
  const port = Number(decodeURIComponent(new URL(url).searchParams.get('redirect_uri')).match(/127\.0\.0\.1:(\d+)/)[1]);
  await eventually(() => run.stderr.includes('Waiting up to'), 'the whole notice');
  assert.ok(run.stderr.includes(`ssh -p 2222 -L ${port}:127.0.0.1:${port} ana@10.2.2.2`), run.stderr);
  // The user's browser, sent back to the loopback port with the flow's state and a code.
  const state = new URL(url).searchParams.get('state');
  const redirected = await fetch(`http://127.0.0.1:${port}/?state=${state}&code=4%2Fcode`);
  assert.equal(redirected.status, 200);
  const code = await within(run.exit, 'the login');
  const report = JSON.parse(run.stdout);
  assert.equal(code, 0);
  assert.deepEqual(report, {
    command: 'login',
    method: 'oauth-personal',
    signedIn: true,
    urlShown: true,
    error: null,
    exitCode: 0,
  });
  assert.ok(!run.stdout.includes(state), 'the URL is not in the report');
  const authenticate = fake.frames('in').find((f) => f.method === 'authenticate');
  assert.equal(authenticate.params.methodId, 'oauth-personal');
  assert.deepEqual(
    fake.methods(),
    ['initialize', 'authenticate', 'session/new'],
    'the sign-in is confirmed by a session',
  );
  await nothingLeft(fake);
});

test('login interrupted (Ctrl-C) abandons the sign-in: exit 130, its server disposed of, nothing left', {
  skip: process.platform === 'win32' && 'Windows has no SIGINT to send a child',
}, async (t) => {
  const { fake, config } = fakeFor(t, { auth: 'required', sign_in: { flow: 'browser', wait_ms: 20000 } });
  const run = start(['login', ...config]);
  t.after(() => run.child.kill());
  await eventually(() => run.stderr.includes('Waiting up to'), 'the sign-in notice');
  run.child.kill('SIGINT');
  const code = await within(run.exit, 'the interrupted login');
  assert.equal(code, 130);
  assert.match(run.stdout, /^not signed in \(ACP_AUTH_REQUIRED\): the sign-in was interrupted/);
  assert.match(run.stderr, /login interrupted/);
  // The ledger beside the server's scratch folder goes only when the server is disposed of.
  await nothingLeft(fake);
});

test('login with a method the server does not advertise fails before any authenticate; an unknown method is a usage error', async (t) => {
  const { fake, config } = fakeFor(t, { auth: 'required', initialize: { auth_methods: ['oauth-personal'] } });
  const offered = await cli(['login', '--method', 'gemini-api-key', ...config]);
  assert.equal(offered.code, 1);
  assert.match(offered.stdout, /does not offer the sign-in method gemini-api-key; it offers oauth-personal/);
  assert.deepEqual(fake.methods(), ['initialize']);
  const unknown = await cli(['login', '--method', 'password', ...config]);
  assert.equal(unknown.code, 64);
  assert.match(unknown.stdout, /password/);
  await nothingLeft(fake);
});

test('a refused command line or config exits 64 and starts nothing; --help documents the exit codes', async (t) => {
  const help = await cli(['--help']);
  assert.equal(help.code, 0);
  for (const word of ['doctor', 'status', 'login', 'logout', 'models', 'Exit codes', '64'])
    assert.ok(help.stdout.includes(word), word);
  assert.equal((await cli(['frobnicate'])).code, 64);
  assert.equal((await cli(['status', '--quick'])).code, 64, 'a flag of another command');
  const fake = fakeServer({});
  t.after(() => fake.remove());
  const refused = await cli(['status', '--config', JSON.stringify({ server: fake.server, timeoutMS: 5 })]);
  assert.equal(refused.code, 64);
  assert.match(refused.stderr, /timeoutMS.*ACP_INVALID_CONFIG/);
  assert.deepEqual(fake.journal(), [], 'no server started');
  const row = await cli([
    'status',
    '--config',
    JSON.stringify({
      id: 'llm-antigravity-acp',
      name: 'antigravity-acp-dsh',
      config: { server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow },
    }),
  ]);
  assert.match(row.stdout, /sign-in: ok/, 'a whole config row is read as its config');
});
