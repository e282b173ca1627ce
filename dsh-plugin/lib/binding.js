/**
 * Loads the native addon, lazily: nothing is loaded on import; the first `binding()` (the
 * first adapter construction) or `addonPath()` loads it, once per process. Where from, in
 * this order (napi-rs's per-platform layout):
 *
 * 1. `ANTIGRAVITY_ACP_DSH_ADDON`, an addon file to load instead (a debug build, CI);
 * 2. the platform package `antigravity-acp-dsh-<tag>` that the main package's
 *    optionalDependencies install (`binding-platform.js` chooses the tag), if its version
 *    is the main package's;
 * 3. a local build beside the package root (`antigravity-acp-dsh.<tag>.node`, what
 *    `scripts/build.mjs` writes in a checkout; the package ships none).
 *
 * An unsupported platform (musl included), a platform package of another version, or a
 * supported platform with neither a package nor a local build throws DSH's `LlmError`, code
 * `ACP_PLATFORM_UNSUPPORTED`, naming the platform and the package looked for.
 *
 * `loadAddon` takes the platform, the report, the resolver and the file check as
 * parameters, so tests can play any platform without its binary.
 * @module antigravity-acp-dsh/lib/binding
 */
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { LlmError } from '@deepseek-ai/dsh-llm';
import { choosePackage } from './binding-platform.js';

/** The code of every failure to find an addon that fits. */
export const PLATFORM_UNSUPPORTED = 'ACP_PLATFORM_UNSUPPORTED';

const nodeRequire = createRequire(import.meta.url);
const root = dirname(dirname(fileURLToPath(import.meta.url)));

/**
 * @typedef {object} LoadOptions
 * @property {string} platform - `process.platform`.
 * @property {string} arch - `process.arch`.
 * @property {any} [report] - `process.report` (read on Linux only, for the C library).
 * @property {NodeJS.Require | ((id: string) => any) & {resolve: (id: string) => string}} require -
 *   loads a module or addon by package name or path; `require.resolve` names its file.
 * @property {(path: string) => boolean} [exists] - whether a file exists (the local build).
 * @property {string} version - the main package's version; the platform package must have it.
 * @property {string} [localDir] - where a local build sits (the package root).
 * @property {string} [override] - `ANTIGRAVITY_ACP_DSH_ADDON`: an addon file to load instead.
 */

/**
 * The binding's `ChunkStreamHandle` (`src/stream.rs`). Its async methods resolve to a JSON
 * envelope (`failure.js`'s `settle` reads it).
 * @typedef {object} NativeStream
 * @property {(max?: number | null) => Promise<string>} nextBatch - every chunk already
 *   buffered, up to `max`, as the envelope of a JSON array (`[]` once ended).
 * @property {() => void} abort - cancels the request's signal.
 * @property {() => void} close - drops the Rust stream.
 */

/**
 * The binding's `Provider` (`src/provider.rs`): JSON in, JSON out. The synchronous methods
 * throw an error with a `code`; the async ones resolve to a JSON envelope.
 * @typedef {object} NativeProvider
 * @property {(provider: string) => string} providerInfo
 * @property {(provider: string) => string} providerRetryPolicy - JSON, `null` for none.
 * @property {(provider: string) => Promise<string>} listModels
 * @property {(provider: string, model: string) => Promise<string>} resolveModel
 * @property {(provider: string, model: string) => string | null} resolveModelNow
 * @property {(optionsJson: string, imagesJson: string | null) => NativeStream} stream
 * @property {() => Promise<string>} dispose
 */

/**
 * The addon's exports. `benchDrain` exists only in builds with the `bench` feature, the test
 * hooks only in builds with `test-hooks` (a debug build).
 * @typedef {object} Addon
 * @property {new (configJson: string, log?: (line: string) => void) => NativeProvider} Provider - `log`
 *   receives each line of an install a turn starts (steps, and progress every few seconds).
 * @property {number} DEFAULT_BATCH - the most chunks one `nextBatch` takes when JS names no
 *   bound (`src/stream.rs`); the adapter asks for that many.
 * @property {(provider: NativeProvider, optionsJson: string) => Promise<string>} [benchDrain]
 * @property {() => void} [testPanic]
 * @property {() => Promise<string>} [testPanicAsync]
 * @property {() => NativeStream} [testUnfinishedStream]
 * @property {(command: string, configJson: string, hostJson: string, optionsJson: string) => Promise<string>} runUserCommand -
 *   the `antigravity-acp-dsh` binary's `doctor`, `status`, `logout` or `models`: the envelope of
 *   its output (`{exitCode, text, report}`).
 * @property {(configJson: string, optionsJson: string) => NativeLoginHandle} startLogin - the
 *   binary's `login`.
 * @property {(configJson: string, hostJson: string, optionsJson: string) => NativeDoctorHandle} startDoctor -
 *   the binary's `doctor` (options `quick`, `install`, `clean`, `progress: 'terminal' | 'lines'`).
 */

/**
 * The binding's `DoctorHandle` (`src/user_commands.rs`).
 * @typedef {object} NativeDoctorHandle
 * @property {() => Promise<string>} nextEvent - the envelope of the next event (`{kind:
 *   'progress', text}` to write to stderr as it is, then `{kind: 'done', output}`), `null` after.
 */

/**
 * The binding's `LoginHandle` (`src/user_commands.rs`).
 * @typedef {object} NativeLoginHandle
 * @property {() => Promise<string>} nextEvent - the envelope of the next event
 *   (`{kind: 'url', url, port, forward, text}`, then `{kind: 'done', output}`), `null` after.
 * @property {() => void} cancel - abandons the sign-in: the login disposes of its server,
 *   then its output (not signed in) follows.
 */

/**
 * @typedef {object} Loaded
 * @property {Addon} addon - the binding's exports.
 * @property {string} path - the file they came from.
 * @property {'override' | 'package' | 'local'} source - which of the three it was.
 */

/**
 * Find and load the addon for a platform (no caching: `binding()` caches).
 * @param {LoadOptions} options
 * @returns {Loaded}
 * @throws {LlmError} `ACP_PLATFORM_UNSUPPORTED` when no addon fits.
 */
export function loadAddon({ platform, arch, report, require, exists = existsSync, version, localDir, override }) {
  if (override) return { addon: require(override), path: require.resolve(override), source: 'override' };
  const choice = choosePackage({ platform, arch, report });
  if (!choice.supported) {
    throw new LlmError(
      `antigravity-acp-dsh has no addon for ${choice.platform} (looked for the package ${choice.packageName}): ${choice.reason}`,
      PLATFORM_UNSUPPORTED,
    );
  }
  const found = installedVersion(require, choice.packageName);
  if (found !== undefined) {
    if (found !== version) {
      throw new LlmError(
        `antigravity-acp-dsh ${version} found the package ${choice.packageName} at version ${found} for ` +
          `${choice.platform}; they must be the same version: reinstall antigravity-acp-dsh`,
        PLATFORM_UNSUPPORTED,
      );
    }
    return { addon: require(choice.packageName), path: require.resolve(choice.packageName), source: 'package' };
  }
  const local = localDir === undefined ? undefined : join(localDir, choice.file);
  if (local !== undefined && exists(local)) return { addon: require(local), path: local, source: 'local' };
  throw new LlmError(
    `antigravity-acp-dsh found no addon for ${choice.platform}: the package ${choice.packageName} is not installed ` +
      `(an optional dependency: install without omitting optional dependencies, and with the Node DSH runs on, ` +
      `^22.19 || >=24: npm on an older Node skips the package without an error)` +
      (local === undefined ? '' : ` and there is no local build at ${local} (\`npm run build\` in a checkout)`),
    PLATFORM_UNSUPPORTED,
  );
}

/**
 * The version of an installed package, through the resolver.
 * @param {(id: string) => any} require
 * @param {string} name - a package name.
 * @returns {string | undefined} `undefined` when the package is not installed.
 */
function installedVersion(require, name) {
  try {
    return require(`${name}/package.json`).version;
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error)?.code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

/** @type {Loaded | undefined} */
let loaded;

/**
 * This process's addon, loaded on the first call (shared by every plugin scope).
 * @returns {Loaded}
 * @throws {LlmError} `ACP_PLATFORM_UNSUPPORTED` (again on each call until one loads).
 */
function current() {
  loaded ??= loadAddon({
    platform: process.platform,
    arch: process.arch,
    report: process.report,
    require: nodeRequire,
    version: nodeRequire('../package.json').version,
    localDir: root,
    override: process.env.ANTIGRAVITY_ACP_DSH_ADDON || undefined,
  });
  return loaded;
}

/**
 * The loaded addon's exports, loading it on the first call.
 * @returns {Addon}
 */
export function binding() {
  return current().addon;
}

/**
 * Which addon file this process loaded (a diagnostic: override, platform package or local
 * build), loading it on the first call.
 * @returns {string}
 */
export function addonPath() {
  return current().path;
}

/**
 * Which addon this process loaded and how it was found (`antigravity-acp-dsh doctor`
 * reports it), loading it on the first call.
 * @returns {{path: string, source: Loaded['source']}}
 */
export function loadedAddon() {
  const { path, source } = current();
  return { path, source };
}
