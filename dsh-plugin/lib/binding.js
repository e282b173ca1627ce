/**
 * Loads the native addon (napi-rs's per-platform layout): the platform package
 * `antigravity-acp-dsh-<platform>` a user installs through the main package's
 * optionalDependencies, else a local build beside this package
 * (`antigravity-acp-dsh.<platform>.node`, what `npm run build` writes). An unsupported
 * platform, or one with neither, throws an error naming what was tried.
 *
 * `ANTIGRAVITY_ACP_DSH_ADDON` names an addon file to load instead (a debug build, CI).
 * @module antigravity-acp-dsh/lib/binding
 */
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { PLATFORMS, platformTag } from './binding-platform.js';

const require = createRequire(import.meta.url);
const root = dirname(dirname(fileURLToPath(import.meta.url)));

/**
 * Load the addon.
 * @returns {{addon: object, path: string}} the binding's exports (`Provider`,
 *   `ChunkStreamHandle`; `benchDrain` and the test hooks only in builds with their
 *   features) and the file they came from.
 */
export function loadBinding() {
  const tried = [];
  const explicit = process.env.ANTIGRAVITY_ACP_DSH_ADDON;
  if (explicit) return { addon: require(explicit), path: require.resolve(explicit) };
  const tag = platformTag();
  if (!PLATFORMS.includes(tag)) {
    throw new Error(
      `antigravity-acp-dsh has no binary for ${tag} (built: ${PLATFORMS.join(', ')}); ` +
        'build one with `npm run build` in a checkout of the repository',
    );
  }
  const pkg = `antigravity-acp-dsh-${tag}`;
  try {
    return { addon: require(pkg), path: require.resolve(pkg) };
  } catch (error) {
    if (error?.code !== 'MODULE_NOT_FOUND') throw error;
    tried.push(pkg);
  }
  const local = join(root, `antigravity-acp-dsh.${tag}.node`);
  if (existsSync(local)) return { addon: require(local), path: local };
  tried.push(local);
  throw new Error(
    `antigravity-acp-dsh: no addon for ${tag} (tried ${tried.join(', ')}); ` +
      'install the platform package or run `npm run build`',
  );
}

const loaded = loadBinding();

/** The loaded addon, shared by every plugin scope of the process. */
export const binding = loaded.addon;

/** The file the addon was loaded from. */
export const addonPath = loaded.path;
