/**
 * `antigravity-acp-dsh`: the Cordis plugin a DSH user mounts (`llm-antigravity-acp`). It
 * registers one {@link AntigravityAcpAdapter} for `config.provider` with DSH's LLM service
 * (`ctx.llm`, from `@deepseek-ai/dsh-llm`) and disposes it with the plugin's scope.
 *
 * Written by hand: the native binding passes JSON strings, so its generated types would say
 * nothing; these describe the JS the package ships (`index.js`, `lib/`). `tsconfig.json`
 * checks that JS against them (`npm run typecheck`).
 * @module antigravity-acp-dsh
 */
import type { Context } from '@deepseek-ai/cordis';
import { LlmAdapter } from '@deepseek-ai/dsh-llm';
import type {
  GenerateOptions,
  LlmModelInfo,
  LlmProviderInfo,
  LlmResolvedModelInfo,
  ResolvedRetryPolicy,
  StreamChunk,
} from '@deepseek-ai/dsh-llm';
import type Schema from '@deepseek-ai/schemastery';

/** The plugin's name, as Cordis and DSH's logs show it. */
export declare const name: 'llm-antigravity-acp';

/**
 * The services the plugin needs: DSH's LLM service only. The attachment service
 * (`ctx.attachments`) is optional and looked up per request.
 */
export declare const inject: string[];

/** DSH's provider route for this adapter when `config.provider` is not set. */
export declare const DEFAULT_PROVIDER: 'antigravity-acp';

/** An explicit server command (`config.server`), as the validated config holds it. */
export interface ServerCommand {
  /** The server executable (absolute, or looked up on `PATH`). Must not be empty. */
  command: string;
  /** Its arguments (`[]` when not set). */
  args: string[];
  /** Variables set for the server on top of the allowlisted environment (`{}` when not set). */
  env: Record<string, string>;
}

/** Whether the server runs confined by the kernel (Linux Landlock). */
export type Confinement = 'required' | 'best_effort' | 'off';

/** The sign-in methods Google's server 1.3.0 advertises. */
export type AuthMethod = 'oauth-personal' | 'oauth-business' | 'gemini-api-key' | 'agent-platform';

/** Whose way of naming a bridge call permission requests are judged by (`auto`: by `initialize`). */
export type AgentProfile = 'auto' | 'antigravity' | 'gemini-cli';

/**
 * The plugin's config once {@link Config} (the schema) validated it: what `apply` receives.
 * Only `provider` has a default here; every other absent field keeps the Rust adapter's
 * default (named on each field), and the adapter validates every value: a refused one
 * throws `LlmError` `ACP_INVALID_CONFIG`, naming the field, and the plugin does not load.
 * Unknown fields are refused the same way.
 */
export interface Config {
  /** The provider route DSH selects this adapter by. Default `antigravity-acp`; not empty. */
  provider: string;
  /** An explicit server command; absent: the pinned 1.3.0 build, installed and verified by the adapter. */
  server?: ServerCommand;
  /** Where the installer reads the registry document (an `https://` URL). Default: the built-in pin. */
  registry?: string;
  /** The installer's cache folder (absolute). Default: the platform's cache folder. */
  cacheDir?: string;
  /** Allow `http://` on loopback for the registry and archive (tests, mirrors). Default `false`. */
  insecureLoopback?: boolean;
  /** A SHA-256 (hex) the archive must have instead of the built-in pin. */
  sha256?: string;
  /** Where private scratch directories are made (absolute). Default: the system temp folder. */
  scratchRoot?: string;
  /** Bounds each active model segment, in ms. Default 600000. */
  timeoutMs?: number;
  /** Bounds how long a parked tool call waits for DSH's result, in ms. Default 170000. */
  toolTimeoutMs?: number;
  /** How long a healthy idle process is kept, in ms. Default 300000. */
  idleProcessTimeoutMs?: number;
  /** How many healthy idle processes are kept (0 disables pooling). Default 2. */
  maxIdleProcesses?: number;
  /** How many sessions one process may open (at least 1). Default 32. */
  maxSessionsPerProcess?: number;
  /** How many tool turns may be active at once (at least 1). Default 8. */
  maxActiveTurns?: number;
  /** The models listed before discovery ran. Default: the 1.3.0 free tier's models. */
  models?: string[];
  /** Tool names every session disables on top of the server's built-in ones (no empty name). */
  disabledTools?: string[];
  /** Default `best_effort`: confine where the kernel can; `required` refuses an unconfined server. */
  confinement?: Confinement;
  /** Absolute paths a confined server may also read (and execute). */
  allowRead?: string[];
  /** Absolute paths a confined server may also read and write. */
  allowWrite?: string[];
  /**
   * Default `oauth-personal`: the only sign-in method the adapter uses when the server asks;
   * it never switches a method the server's settings.json already names.
   */
  authMethod?: AuthMethod;
  /**
   * Default `auto`: the agent `initialize` names (`gemini-cli` is Gemini CLI, anything else
   * Antigravity 1.3.0); whose way of naming a bridge call the adapter trusts when it allows a
   * tool call once.
   */
  agentProfile?: AgentProfile;
}

/**
 * What a user may write as the plugin's config (a `cordis.yml` row's `config`, or the second
 * argument of `ctx.plugin`): every field optional; `null` counts as absent.
 */
export type ConfigInput = {
  [K in keyof Config]?: (K extends 'server' ? ServerCommandInput : Config[K]) | null;
};

/** A server command as a user writes it: only `command` is required. */
export interface ServerCommandInput {
  command: string;
  args?: string[] | null;
  env?: Record<string, string> | null;
}

/**
 * The schema Cordis validates the plugin's config with (schemastery, hence also a Standard
 * Schema): call it with a {@link ConfigInput} to get the {@link Config} `apply` receives.
 */
export declare const Config: Schema<ConfigInput, Config>;

/**
 * Mount the adapter: register it for `config.provider` with `ctx.llm`, and dispose it with
 * the plugin's scope (the disposal settles once no server process, port or scratch directory
 * of it remains).
 * @param ctx - the plugin's context; `ctx.llm` is DSH's LLM service.
 * @param config - the validated config.
 * @throws {import('@deepseek-ai/dsh-llm').LlmError} `ACP_INVALID_CONFIG` for a refused config,
 *   `ACP_PLATFORM_UNSUPPORTED` when no addon fits this platform.
 */
export declare function apply(ctx: Context, config: Config): void;

/**
 * Which addon file this process loaded (a diagnostic: `ANTIGRAVITY_ACP_DSH_ADDON`, the
 * platform package, or a local build), loading it on the first call.
 * @throws {import('@deepseek-ai/dsh-llm').LlmError} `ACP_PLATFORM_UNSUPPORTED` when no addon fits.
 */
export declare function addonPath(): string;

/** An image as DSH's attachment service (`@deepseek-ai/dsh-attachment`) returns it. */
export interface StoredImage {
  /** The stored reference; its `mediaType` wins over the request's. */
  ref: { mediaType: string };
  data: Uint8Array;
}

/**
 * The part of DSH's attachment service (`ctx.attachments`, an `AttachmentStore`) the
 * adapter uses: `ref` is an image block's `attachment`.
 */
export interface AttachmentReader {
  // biome-ignore lint/suspicious/noExplicitAny: the reference is the attachment store's own type, from @deepseek-ai/dsh-attachment, an optional service this package does not depend on; any keeps every store assignable.
  readImage(ref: any, signal?: AbortSignal): Promise<StoredImage>;
}

/**
 * One native stream (the binding's `ChunkStreamHandle`): DSH's chunks as JSON, in batches.
 * Seen only through {@link AdapterHooks.onStream}.
 */
export interface NativeStreamHandle {
  /** Every chunk already buffered, up to `max`, as the JSON envelope of an array (`[]` once ended). */
  nextBatch(max?: number | null): Promise<string>;
  /** Cancel the request (its `GenerateOptions.signal`). */
  abort(): void;
  /** Drop the Rust stream (DSH's early return). */
  close(): void;
}

/** Test hooks of {@link AntigravityAcpAdapter}; the plugin passes none. */
export interface AdapterHooks {
  /** Sees each native stream handle, as the adapter opens it. */
  onStream?: (handle: NativeStreamHandle) => void;
}

/**
 * DSH's `LlmAdapter` over the Rust adapter. Every failure is DSH's `LlmError` with a code
 * (the repository README's "Errors DSH sees"); a stream's failure arrives as its `error`
 * or `aborted` finish.
 *
 * From `@deepseek-ai/dsh-llm` 0.1.1 DSH's runtime dispatches every call through
 * `LlmAdapter.prepareCall(provider, model, signal)`; this class inherits DSH's own
 * (`resolveModel`, then `stream` on the same adapter: it has no settings that change between
 * the two). `resolveModel` says every model takes text and images, so that DSH does not turn
 * a request's images into text first.
 */
export declare class AntigravityAcpAdapter extends LlmAdapter {
  /**
   * @param configJson - the plugin config as JSON (the set fields of a {@link Config}).
   * @param attachments - returns DSH's attachment service, or `undefined` (read per request).
   * @param hooks - tests only.
   * @param log - told each line of an install a turn starts (its steps, and a progress line
   *   every few seconds); the plugin passes DSH's logger.
   * @throws {import('@deepseek-ai/dsh-llm').LlmError} `ACP_INVALID_CONFIG` naming the field;
   *   `ACP_PLATFORM_UNSUPPORTED` when no addon fits (the first construction loads it).
   */
  constructor(
    configJson: string,
    attachments?: () => AttachmentReader | undefined,
    hooks?: AdapterHooks,
    log?: (line: string) => void,
  );
  providerInfo(provider: string): LlmProviderInfo;
  providerRetryPolicy(provider: string): ResolvedRetryPolicy | undefined;
  listModels(provider: string): Promise<readonly LlmModelInfo[]>;
  /** An already aborted `signal` rejects with `LlmError` `ABORTED`. */
  resolveModel(provider: string, model: string, signal?: AbortSignal): Promise<LlmResolvedModelInfo>;
  stream(options: GenerateOptions): AsyncGenerator<StreamChunk, void, undefined>;
  /** Tear down every turn, process and scratch directory; settles once all are gone (idempotent). */
  dispose(): Promise<void>;
}

/** The plugin, as Cordis loads it (`ctx.plugin(plugin, config)`, or a `cordis.yml` row by package name). */
declare const plugin: {
  name: typeof name;
  inject: typeof inject;
  Config: typeof Config;
  apply: typeof apply;
};
export default plugin;
