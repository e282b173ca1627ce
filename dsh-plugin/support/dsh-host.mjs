/**
 * Runs this checkout's tests and real loop on another DSH than `dsh-plugin/node_modules`
 * holds: loaded first (`NODE_OPTIONS=--import=<this file>`, what `scripts/test.mjs
 * --dsh-llm` and `ci/real-loop.sh` set), with `ANTIGRAVITY_ACP_DSH_HOST` naming a host
 * folder (`ci/dsh-llm-0.1.1/`: a `package.json` whose `dependencies` name the packages to
 * swap, its `package-lock.json` pinning them, installed by `npm ci` there). Every import or
 * require of a package that folder lists, from anywhere (the plugin, the tests, DSH's own
 * packages), resolves to that folder's copy; every other bare import made from inside that
 * folder resolves as from `dsh-plugin/`, so the host keeps one Cordis and one of each other
 * DSH package, as a real host with only those packages at another version would.
 *
 * ESM resolution follows the importing file's real path up through `node_modules`, so a
 * test in `dsh-plugin/test/` always finds `dsh-plugin/node_modules` first: only a resolve
 * hook (`module.registerHooks`, Node ≥ 22.15, in-thread) changes that without copying the
 * tests. Without the variable this file does nothing. The tests read which `dsh-llm` they
 * got from `hostDshLlm()` and check it against `ANTIGRAVITY_ACP_DSH_LLM`, the version the
 * run was meant to have.
 * @module support/dsh-host
 */
import { readFileSync } from 'node:fs';
import * as modules from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The variable naming the host folder to swap in. */
export const HOST_VARIABLE = 'ANTIGRAVITY_ACP_DSH_HOST';
/** The variable naming the `dsh-llm` version a run must resolve (`scripts/test.mjs` sets it). */
export const LLM_VARIABLE = 'ANTIGRAVITY_ACP_DSH_LLM';

const plugin = join(dirname(fileURLToPath(import.meta.url)), '..');
const hostDir = process.env[HOST_VARIABLE];

/**
 * Whether `specifier` names package `name` or a file inside it.
 * @param {string} specifier
 * @param {string} name
 */
const names = (specifier, name) => specifier === name || specifier.startsWith(`${name}/`);

/** A bare specifier: a package name, not a path, URL or builtin. */
const bare = (/** @type {string} */ specifier) => /^(@[^/]+\/)?[^./:][^:]*$/.test(specifier);

if (hostDir) {
  const host = resolve(hostDir);
  const swapped = Object.keys(JSON.parse(readFileSync(join(host, 'package.json'), 'utf8')).dependencies ?? {});
  // Resolving "as from" a folder: the parent URL of a file (that need not exist) in it.
  const fromHost = pathToFileURL(join(host, 'package.json')).href;
  const fromPlugin = pathToFileURL(join(plugin, 'package.json')).href;
  const hostModules = pathToFileURL(join(host, 'node_modules')).href;
  // Node 20 (which only runs npm here) has none: a swap asked of it must not pass unswapped.
  if (typeof modules.registerHooks !== 'function') throw new Error(`${HOST_VARIABLE} needs Node >= 22.15`);
  /**
   * Resolve `specifier` as from the folder of `from`: an import by the next hook with that
   * parent; a require() by that folder's own require (the next hook keeps the requiring
   * module's search paths, whatever the parent URL says).
   * @param {string} specifier
   * @param {any} context - the hook's context.
   * @param {any} nextResolve
   * @param {string} from - a file URL in the folder.
   */
  const resolveFrom = (specifier, context, nextResolve, from) => {
    if (!context.conditions?.includes('require')) return nextResolve(specifier, { ...context, parentURL: from });
    // Some Nodes (22) run these hooks for require.resolve too: that inner lookup is plain.
    plain = true;
    try {
      return { url: pathToFileURL(modules.createRequire(from).resolve(specifier)).href, shortCircuit: true };
    } finally {
      plain = false;
    }
  };
  let plain = false;
  modules.registerHooks({
    resolve(specifier, context, nextResolve) {
      if (plain) return nextResolve(specifier, context);
      if (swapped.some((name) => names(specifier, name))) {
        return resolveFrom(specifier, context, nextResolve, fromHost);
      }
      if (bare(specifier) && !modules.isBuiltin(specifier) && context.parentURL?.startsWith(`${hostModules}/`)) {
        return resolveFrom(specifier, context, nextResolve, fromPlugin);
      }
      return nextResolve(specifier, context);
    },
  });
}

/**
 * Start this process's children without the swap (this process keeps it): the variable
 * and this file's `--import` leave `process.env`. For a test whose children run on a host
 * of their own (the packed tarballs installed into a fresh folder).
 */
export function leaveSwap() {
  delete process.env[HOST_VARIABLE];
  const self = `--import=${import.meta.url}`;
  const options = (process.env.NODE_OPTIONS ?? '').split(' ').filter((option) => option && option !== self);
  if (options.length) process.env.NODE_OPTIONS = options.join(' ');
  else delete process.env.NODE_OPTIONS;
}

/**
 * The `@deepseek-ai/dsh-llm` this process resolves (through the swap, when one is active):
 * its version and the folder it is in.
 * @returns {{version: string, dir: string}}
 */
export function hostDshLlm() {
  const entry = fileURLToPath(import.meta.resolve('@deepseek-ai/dsh-llm'));
  let dir = dirname(entry);
  while (!dir.endsWith(join('node_modules', '@deepseek-ai', 'dsh-llm'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package folder above ${entry}`);
    dir = up;
  }
  return { version: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version, dir };
}
