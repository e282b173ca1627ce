/**
 * A throwaway npm registry on loopback: Verdaccio (pinned in `ci/verdaccio/package.json`,
 * installed there by `npm ci`), its config and storage in a folder of the caller's, proxying
 * the public registry (the one npm is configured with) for every package except this
 * project's (`antigravity-acp-dsh*` are served from the local storage only, never proxied,
 * so an install can only get what was just published). Publishing needs a user: a throwaway
 * one is created against this registry, and its token is returned, never written to disk
 * (npm takes it from the environment: `npmAuthEnv`).
 *
 * Used by `dsh-plugin/test/pack.test.mjs` (`startRegistry`) and by `ci/rehearse.sh`, which
 * runs it as a command:
 *
 *   node dsh-plugin/support/registry.mjs start DIR   # prints `URL TOKEN` once /-/ping answers;
 *                                                    # the server keeps running (pid in DIR/pid)
 *   node dsh-plugin/support/registry.mjs stop DIR    # stops the server DIR/pid names
 *
 * Exit codes: 0 done; 1 Verdaccio did not answer in time (its log is printed) or is not installed.
 * @module support/registry
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Verdaccio's pinned install (`npm ci --prefix ci/verdaccio`). */
export const VERDACCIO_DIR = join(repo, 'ci', 'verdaccio');
const BIN = join(VERDACCIO_DIR, 'node_modules', 'verdaccio', 'bin', 'verdaccio');

/** The packages only the local storage serves. */
const LOCAL_ONLY = 'antigravity-acp-dsh*';

/** A free loopback port (the kernel's choice, released for Verdaccio to take). */
async function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => ok(port));
    });
  });
}

/**
 * The registry npm is configured with (the uplink), e.g. `https://registry.npmjs.org/`.
 * @returns {string}
 */
function upstream() {
  const configured = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim();
  return configured.endsWith('/') ? configured : `${configured}/`;
}

/**
 * Verdaccio's config: local storage, htpasswd users (anyone may add one: this registry lives
 * for one run, on loopback), this project's packages local only, the rest proxied.
 * @param {string} dir - the registry's folder.
 * @param {number} port
 * @returns {string} YAML.
 */
function config(dir, port) {
  const proxy = process.env.HTTPS_PROXY ?? process.env.https_proxy;
  return [
    `storage: ${JSON.stringify(join(dir, 'storage'))}`,
    'auth:',
    '  htpasswd:',
    `    file: ${JSON.stringify(join(dir, 'htpasswd'))}`,
    '    max_users: 10',
    'uplinks:',
    '  npmjs:',
    `    url: ${JSON.stringify(upstream())}`,
    '    timeout: 60s',
    '    cache: true',
    ...(proxy ? [`https_proxy: ${JSON.stringify(proxy)}`] : []),
    'packages:',
    `  '${LOCAL_ONLY}':`,
    '    access: $all',
    '    publish: $authenticated',
    '    unpublish: $authenticated',
    "  '**':",
    '    access: $all',
    '    publish: $authenticated',
    '    proxy: npmjs',
    `listen: 127.0.0.1:${port}`,
    'max_body_size: 200mb',
    'web:',
    '  enable: false',
    'log: { type: stdout, format: pretty, level: warn }',
    '',
  ].join('\n');
}

/**
 * Polls `url`'s `/-/ping` until it answers 200, for at most `ms`.
 * @param {string} url
 * @param {number} ms
 * @param {() => boolean} alive - false once the server process has ended (no point waiting).
 */
async function answered(url, ms, alive) {
  const until = Date.now() + ms;
  while (Date.now() < until && alive()) {
    try {
      const response = await fetch(`${url}-/ping`, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return true;
    } catch {
      // Not listening yet.
    }
    await new Promise((ok) => setTimeout(ok, 100));
  }
  return false;
}

/**
 * A throwaway user on `url`, for publishing: its token.
 * @param {string} url
 * @returns {Promise<string>}
 */
async function addUser(url) {
  const name = `rehearsal-${process.pid}`;
  const password = crypto.randomUUID();
  const response = await fetch(`${url}-/user/org.couchdb.user:${name}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ _id: `org.couchdb.user:${name}`, name, password, type: 'user', roles: [] }),
  });
  const body = /** @type {{token?: string}} */ (await response.json());
  if (!response.ok || !body.token)
    throw new Error(`${url} refused a new user: ${response.status} ${JSON.stringify(body)}`);
  return body.token;
}

/**
 * The environment that gives npm the registry's token for its URL, with no file (npm reads
 * `npm_config_//host:port/:_authToken`).
 * @param {string} url - the registry's URL, with its trailing slash.
 * @param {string} token
 * @returns {Record<string, string>}
 */
export function npmAuthEnv(url, token) {
  return { [`npm_config_${url.replace(/^https?:/, '')}:_authToken`]: token };
}

/**
 * Starts Verdaccio with its config and storage in `dir` (made if missing), waits for its
 * ping (bounded), and adds a throwaway user.
 * @param {string} dir - the registry's folder (its storage, config, log and pid).
 * @param {{detached?: boolean, readyMs?: number}} [options] - `detached`: outlives this
 *   process (the command form).
 * @returns {Promise<{url: string, token: string, pid: number, stop(): void}>}
 */
export async function startRegistry(dir, { detached = false, readyMs = 60_000 } = {}) {
  if (!existsSync(BIN)) throw new Error(`Verdaccio is not installed: npm ci --prefix ${VERDACCIO_DIR}`);
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const configFile = join(dir, 'config.yaml');
  writeFileSync(configFile, config(dir, port));
  const log = openSync(join(dir, 'verdaccio.log'), 'a');
  // Verdaccio runs on the Node running this (its engines: >=20).
  const child = spawn(process.execPath, [BIN, '--config', configFile], {
    stdio: ['ignore', log, log],
    detached,
    env: { ...process.env, VERDACCIO_APPDIR: dir },
  });
  let ended = false;
  child.on('exit', () => {
    ended = true;
  });
  const stop = () => {
    if (!ended && child.pid !== undefined) {
      try {
        process.kill(child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
  };
  if (!(await answered(url, readyMs, () => !ended))) {
    stop();
    throw new Error(
      `Verdaccio did not answer ${url}-/ping within ${readyMs} ms:\n${readFileSync(join(dir, 'verdaccio.log'), 'utf8')}`,
    );
  }
  const pid = /** @type {number} */ (child.pid);
  writeFileSync(join(dir, 'pid'), `${pid}\n`);
  if (detached) child.unref();
  try {
    return { url, token: await addUser(url), pid, stop };
  } catch (error) {
    stop();
    throw error;
  }
}

/**
 * Stops the registry whose pid `dir/pid` holds (the command form's `stop`), if it runs.
 * @param {string} dir
 */
export function stopRegistry(dir) {
  const file = join(dir, 'pid');
  if (!existsSync(file)) return;
  const pid = Number(readFileSync(file, 'utf8').trim());
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [command, dir] = process.argv.slice(2);
  if (command === 'start' && dir) {
    try {
      const { url, token } = await startRegistry(resolve(dir), { detached: true });
      process.stdout.write(`${url} ${token}\n`);
    } catch (error) {
      process.stderr.write(`${/** @type {Error} */ (error).message}\n`);
      process.exitCode = 1;
    }
  } else if (command === 'stop' && dir) {
    stopRegistry(resolve(dir));
  } else {
    process.stderr.write('usage: node registry.mjs start|stop DIR\n');
    process.exitCode = 64;
  }
}
