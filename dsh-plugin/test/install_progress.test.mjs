// The first run (issue 36 §5): an install shows its progress. A loopback HTTP host serves an
// agent index and a real ZIP archive whose server member starts the fake; `doctor
// --install` through the binary prints the install's steps as plain lines on a stderr that
// is not a terminal, and a DSH turn that installs logs them through the Cordis logger,
// never the registry's URL. The renderer's pacing (a bar on a terminal, a line every few
// seconds otherwise) is tested in Rust (`user_commands/install_progress/tests.rs`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import plugin from '../index.js';
import { drain } from '../support/checker.mjs';
import { fakeServer } from '../support/fake.mjs';
import { startHost } from '../support/host.mjs';
import { request, user } from '../support/requests.mjs';
import { eventually, within } from '../support/wait.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'antigravity-acp-dsh.js');
const ENTRY = join(root, '..', 'adapter', 'src', 'install', 'antigravity-acp-1.3.0.agent.json');
const unix = process.platform === 'linux' || process.platform === 'darwin';

/** The agent index's key for this machine (`platform::current_platform`). */
function platformKey() {
  const os = process.platform === 'darwin' ? 'darwin' : 'linux';
  return `${os}-${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}`;
}

/**
 * A ZIP of stored (uncompressed) Unix files, each mode 0755.
 * @param {[string, Buffer][]} files - name and bytes.
 * @returns {Buffer}
 */
function zip(files) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const [name, data] of files) {
    const path = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(path.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(path.length, 28);
    central.writeUInt32LE(((0o100755 << 16) >>> 0) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, path, data);
    centrals.push(central, path);
    offset += local.length + path.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/**
 * A fake for `script`, packed as the pinned build's archive (its server member a shell
 * script that starts the fake), and a loopback host serving it and its agent index; both
 * removed after the test.
 * @param {import('node:test').TestContext} t
 * @param {object} [script] - the fake's script.
 * @returns {Promise<{fake: ReturnType<typeof fakeServer>, config: object, hits: () => number}>}
 */
async function servedInstall(t, script = {}) {
  const fake = fakeServer(script);
  t.after(() => fake.remove());
  const quoted = [fake.server.command, ...fake.server.args].map((a) => `'${a}'`).join(' ');
  const archive = zip([
    ['agy_acp_server.par', Buffer.from(`#!/bin/sh\nexec ${quoted} "$@"\n`)],
    ['localharness_external', Buffer.alloc(4096, 'h')],
  ]);
  let hits = 0;
  const server = createServer((req, res) => {
    if (req.url === '/agents.json') {
      const entry = JSON.parse(readFileSync(ENTRY, 'utf8'));
      const target = entry.distribution.binary[platformKey()];
      target.archive = `http://127.0.0.1:${server.address().port}/a.zip`;
      target.args = [];
      res.end(JSON.stringify(entry));
    } else if (req.url === '/a.zip') {
      hits += 1;
      res.writeHead(200, { 'content-length': archive.length });
      res.end(archive);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  const cacheDir = join(fake.dir, 'cache');
  mkdirSync(cacheDir);
  const config = {
    registry: `http://127.0.0.1:${server.address().port}/agents.json`,
    insecureLoopback: true,
    sha256: createHash('sha256').update(archive).digest('hex'),
    cacheDir,
    scratchRoot: fake.scratchRoot,
    confinement: 'off',
  };
  return { fake, config, hits: () => hits };
}

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
  skip: !unix && 'the archive server member is a shell script',
}, async (t) => {
  const { fake, config, hits } = await servedInstall(t);
  const child = spawn(process.execPath, [BIN, 'doctor', '--install', '--quick', '--config', JSON.stringify(config)], {
    cwd: root,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await within(new Promise((resolve) => child.on('close', resolve)), 'doctor --install', 60_000);
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
  skip: !unix && 'the archive server member is a shell script',
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
