/**
 * The pinned server's install, served on loopback as the install scenarios serve it: a real
 * ZIP archive whose server member starts the fake (a shell script, so Unix only) and the
 * agent index that points at it, over plain HTTP on 127.0.0.1 (`insecureLoopback`), with
 * the archive's SHA-256 as the config's `sha256` override. Used by the tests of `doctor
 * --install` and of a turn that installs.
 * @module support/served-install
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import { fakeServer } from './fake.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built-in agent index entry (`adapter/src/install/`), served with its archive URL swapped. */
const ENTRY = join(repo, 'adapter', 'src', 'install', 'antigravity-acp-1.3.0.agent.json');

/** Whether the served archive's server member can run here (it is a shell script). */
export const servedInstallRuns = process.platform === 'linux' || process.platform === 'darwin';

/** The archive's members on Unix (`install::required_members`): the server, then the harness. */
export const SERVER_MEMBER = 'agy_acp_server.par';
export const HARNESS_MEMBER = 'localharness_external';

/** The agent index's key for this machine (`platform::current_platform`). */
export function platformKey() {
  const os = process.platform === 'darwin' ? 'darwin' : 'linux';
  return `${os}-${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}`;
}

/**
 * A ZIP of stored (uncompressed) Unix files, each mode 0755.
 * @param {[string, Buffer][]} files - name and bytes.
 * @returns {Buffer}
 */
export function zip(files) {
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
 * @returns {Promise<{fake: ReturnType<typeof fakeServer>, config: object, registry: string, cacheDir: string,
 *   hits: () => number, indexHits: () => number}>} `config`: the plugin config that installs
 *   from the host into `cacheDir` (`registry`, `insecureLoopback`, `sha256`, `cacheDir`,
 *   `scratchRoot`, `confinement: off`); `hits`: the archive's downloads; `indexHits`: the
 *   agent index's.
 */
export async function servedInstall(t, script = {}) {
  const fake = fakeServer(script);
  t.after(() => fake.remove());
  const quoted = [fake.server.command, ...fake.server.args].map((a) => `'${a}'`).join(' ');
  const archive = zip([
    [SERVER_MEMBER, Buffer.from(`#!/bin/sh\nexec ${quoted} "$@"\n`)],
    [HARNESS_MEMBER, Buffer.alloc(4096, 'h')],
  ]);
  let hits = 0;
  let indexHits = 0;
  const server = createServer((req, res) => {
    if (req.url === '/agents.json') {
      indexHits += 1;
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
  const registry = `http://127.0.0.1:${server.address().port}/agents.json`;
  const config = {
    registry,
    insecureLoopback: true,
    sha256: createHash('sha256').update(archive).digest('hex'),
    cacheDir,
    scratchRoot: fake.scratchRoot,
    confinement: 'off',
  };
  return { fake, config, registry, cacheDir, hits: () => hits, indexHits: () => indexHits };
}
