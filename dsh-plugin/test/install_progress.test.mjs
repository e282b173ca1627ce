// The first run (issue 36 §5): an install shows its progress. A loopback HTTP host serves an
// agent index and a real ZIP archive whose server member starts the fake; `doctor
// --install` through the binary prints the install's steps as plain lines on a stderr that
// is not a terminal, and a DSH turn that installs logs them through the Cordis logger,
// never the registry's URL. The renderer's pacing (a bar on a terminal, a line every few
// seconds otherwise) is tested in Rust (`user_commands/install_progress/tests.rs`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import plugin from '../index.js';
import { drain } from '../support/checker.mjs';
import { cli } from '../support/cli.mjs';
import { startHost } from '../support/host.mjs';
import { request, user } from '../support/requests.mjs';
import { servedInstall, servedInstallRuns } from '../support/served-install.mjs';
import { eventually } from '../support/wait.mjs';

/** The steps' lines, in order, as an install renders them (`install_progress.rs`). */
const STEPS = [
  /^downloading the pinned server \(\d+(\.\d)? (B|KiB)\)$/,
  /^downloaded \d+(\.\d)? (B|KiB) in \d+ s; checking its SHA-256$/,
  /^extracting$/,
  /^writing the receipt$/,
  /^publishing the install$/,
  /^installed the pinned server$/,
];

test('doctor --install on a stderr that is not a terminal prints the install as plain lines', {
  skip: !servedInstallRuns && 'the archive server member is a shell script',
}, async (t) => {
  const { fake, config, hits } = await servedInstall(t);
  const { code, stdout, stderr } = await cli(['doctor', '--install', '--quick', '--config', JSON.stringify(config)]);
  assert.match(stdout, /ok +install /, stdout);
  assert.equal(hits(), 1);
  assert.ok(!stderr.includes('\r') && !stderr.includes('\u001b'), `no redraw on a pipe: ${JSON.stringify(stderr)}`);
  const lines = stderr.trimEnd().split('\n');
  assert.match(lines[0], /^installing \(or checking\) the pinned server first/);
  const steps = lines.slice(1);
  assert.equal(steps.length, STEPS.length, stderr);
  for (const [i, line] of steps.entries()) assert.match(line, STEPS[i]);
  assert.ok(!stderr.includes('127.0.0.1'), 'no URL is shown');
  assert.ok([0, 2].includes(code), `exit ${code}: ${stdout}`);
  assert.deepEqual(fake.pids(), []);
});

test('a DSH turn that installs logs the install through the Cordis logger, then streams', {
  skip: !servedInstallRuns && 'the archive server member is a shell script',
}, async (t) => {
  const { fake, config } = await servedInstall(t, {
    turns: [{ match: { prompt_contains: 'hello' }, steps: [{ text: 'Hi.' }] }],
  });
  const host = await startHost(plugin, config);
  /** @type {string[]} */
  const logged = [];
  host.ctx.logger.exporter({
    export(message) {
      const line = message.args.map(String).join(' ');
      if (message.name === 'antigravity-acp') logged.push(`${message.type} ${line}`);
    },
  });
  try {
    const out = await drain(host.llm.stream(request([user('hello')])));
    assert.deepEqual(out.finish, { kind: 'stop' });
    await eventually(() => logged.some((l) => l.endsWith('installed the pinned server')), 'the installed line');
    assert.equal(logged.length, STEPS.length, logged.join('\n'));
    logged.forEach((line, i) => {
      assert.ok(line.startsWith('info install: '), line);
      assert.match(line.slice('info install: '.length), STEPS[i]);
    });
    assert.ok(!logged.join('\n').includes('127.0.0.1'), 'no URL is logged');
    // The second turn reuses the install: nothing more is logged.
    await drain(host.llm.stream(request([user('hello again')])));
    assert.equal(logged.length, STEPS.length, logged.join('\n'));
  } finally {
    await host.stop();
  }
  assert.deepEqual(fake.pids(), [], 'no fake process outlives the plugin scope');
});
