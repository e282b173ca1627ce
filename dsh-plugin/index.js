/**
 * `antigravity-acp-dsh`: the Cordis plugin a DSH user mounts. It registers one
 * `AntigravityAcpAdapter` (the Rust `antigravity-acp` adapter through its Node binding)
 * for `config.provider` (default `antigravity-acp`) with DSH's LLM service, and disposes
 * it with the plugin scope: once that disposal settles, no server process, port or
 * scratch directory of it remains.
 *
 * `inject` names only `llm`: DSH's attachment service (`ctx.attachments`) is optional, so
 * it is looked up on each call (Cordis 4 here has no optional inject; a required one
 * would keep the plugin from loading in a host without attachments). Without it, a
 * request with an image fails `ACP_ATTACHMENT_UNAVAILABLE`.
 *
 * An install a turn starts (the first turn downloads the pinned server) reports its steps,
 * and a progress line every few seconds, through DSH's logger (`ctx.logger('antigravity-acp')`).
 * @module antigravity-acp-dsh
 */
import { AntigravityAcpAdapter } from './lib/adapter.js';
import { Config, configJson, DEFAULT_PROVIDER } from './lib/config.js';
import { addonPath } from './lib/binding.js';

export const name = 'llm-antigravity-acp';
export const inject = ['llm'];
/**
 * `addonPath()`: which addon file this process loaded (a diagnostic: platform package or local
 * build). Importing this module loads no addon; the first adapter (or this call) does.
 */
export { addonPath };
export { Config, AntigravityAcpAdapter, DEFAULT_PROVIDER };

/**
 * Mount the adapter.
 * @param {import('@deepseek-ai/cordis').Context} ctx - the plugin's context.
 * @param {import('./index.js').Config} config - the validated `Config` (its type is
 *   `index.d.ts`'s, which `npm run typecheck` holds this file to).
 */
export function apply(ctx, config) {
  const logger = ctx.logger('antigravity-acp');
  const adapter = new AntigravityAcpAdapter(
    configJson(config),
    () => ctx.get('attachments'),
    {},
    (line) => logger.info(line),
  );
  ctx.effect(() => () => adapter.dispose(), 'antigravity-acp provider');
  ctx.llm.registerAdapter([config.provider], adapter);
}

/** The plugin object Cordis loads; `index.d.ts` declares its type, checked here. */
export default /** @satisfies {typeof import('./index.js').default} */ ({ name, inject, Config, apply });
