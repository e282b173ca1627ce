/**
 * The plugin's `Config`: the camelCase fields of the Rust `PluginConfig`
 * (`adapter/src/config/plugin.rs`), no more. Only `provider` has a default here; every
 * other absent field keeps the adapter's default, and the adapter validates every value
 * (a refused one throws `ACP_INVALID_CONFIG`, naming the field).
 * @module antigravity-acp-dsh/lib/config
 */
import Schema from '@deepseek-ai/schemastery';

/** @import { Config as ValidConfig, ConfigInput } from '../index.js' */

/**
 * `schema` without a default of its own: an absent value stays `undefined` (schemastery
 * would fill `{}` for an object and `[]` for an array).
 * @template S, T
 * @param {Schema<S, T>} schema
 * @returns {Schema<S, T>}
 */
function absentStaysUndefined(schema) {
  // schemastery's types take a default to be a value (the result then `defined`); an
  // `undefined` default is what keeps the field absent.
  return schema.default(/** @type {any} */ (undefined));
}

/** DSH's provider route for this adapter (the Rust `ADAPTER_ID`). */
export const DEFAULT_PROVIDER = 'antigravity-acp';

/**
 * The schema Cordis validates the plugin's config with. Objects and arrays default to
 * `undefined` here (schemastery would fill `{}` and `[]`), so an absent `server` means the
 * installed build, absent `models` the adapter's list and absent `disabledTools` the
 * built-in tools alone. Its type is `index.d.ts`'s, which `npm run typecheck` holds it to.
 * @type {Schema<ConfigInput, ValidConfig>}
 */
export const Config = Schema.object({
  provider: Schema.string().default(DEFAULT_PROVIDER).description('The provider route DSH selects this adapter by.'),
  server: absentStaysUndefined(
    Schema.object({
      command: Schema.string().required().description('The server executable (absolute, or looked up on PATH).'),
      args: Schema.array(Schema.string()).description('Its arguments.'),
      env: Schema.dict(Schema.string()).description(
        'Variables set for the server on top of the allowlisted environment.',
      ),
    }),
  ).description('An explicit server command; absent: the pinned 1.3.0 build, installed by the adapter.'),
  registry: Schema.string().description('Where the installer reads the registry document (an https:// URL).'),
  cacheDir: Schema.string().description("The installer's cache folder (absolute)."),
  insecureLoopback: Schema.boolean().description('Allow http:// on loopback for the registry and archive.'),
  sha256: Schema.string().description('A SHA-256 the archive must have instead of the built-in pin.'),
  scratchRoot: Schema.string().description('Where private scratch directories are made (absolute).'),
  timeoutMs: Schema.natural().description('Bounds each active model segment.'),
  toolTimeoutMs: Schema.natural().description("Bounds how long a parked tool call waits for DSH's result."),
  idleProcessTimeoutMs: Schema.natural().description('How long a healthy idle process is kept.'),
  maxIdleProcesses: Schema.natural().description('How many healthy idle processes are kept (0 disables pooling).'),
  maxSessionsPerProcess: Schema.natural().description('How many sessions one process may open.'),
  maxActiveTurns: Schema.natural().description('How many tool turns may be active at once.'),
  models: absentStaysUndefined(Schema.array(Schema.string())).description('The models listed before discovery ran.'),
  disabledTools: absentStaysUndefined(Schema.array(Schema.string())).description(
    "Tool names every session disables on top of the server's built-in ones.",
  ),
  confinement: Schema.union(['required', 'best_effort', 'off']).description(
    'Whether the server runs confined by the kernel (Landlock): required refuses an unconfined server, best_effort (the default) confines where the kernel can, off never does.',
  ),
  allowRead: absentStaysUndefined(Schema.array(Schema.string())).description(
    'Absolute paths a confined server may also read (and execute).',
  ),
  allowWrite: absentStaysUndefined(Schema.array(Schema.string())).description(
    'Absolute paths a confined server may also read and write.',
  ),
  authMethod: Schema.union(['oauth-personal', 'oauth-business', 'gemini-api-key', 'agent-platform']).description(
    "The only sign-in method the adapter uses when the server asks (default oauth-personal); it never switches a method the server's settings.json already names.",
  ),
  agentProfile: Schema.union(['auto', 'antigravity', 'gemini-cli']).description(
    "Whose way of naming a bridge call the adapter trusts when it allows a tool call once: auto (the default) picks it from the agent's initialize answer, gemini-cli for Gemini CLI, antigravity for Google's 1.3.0 server.",
  ),
});

/**
 * The JSON the Rust `PluginConfig::from_json` reads: the config's set fields.
 * @param {ValidConfig | undefined} config - the validated config.
 * @returns {string} JSON text.
 */
export function configJson(config) {
  const set = Object.fromEntries(Object.entries(config ?? {}).filter(([, value]) => value !== undefined));
  return JSON.stringify(set);
}
