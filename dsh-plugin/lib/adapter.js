/**
 * `AntigravityAcpAdapter`: DSH's `LlmAdapter` over the native `Provider`. Each method
 * forwards to Rust with DSH's values as JSON; the only logic here is the host glue a
 * binding cannot do: reading image bytes through DSH's attachment service, wiring
 * `options.signal` to `abort()`, and closing the Rust stream when DSH returns early. An
 * install a turn starts reports its lines (rendered and throttled in Rust) to `log`.
 * @module antigravity-acp-dsh/lib/adapter
 */
import { LlmAdapter, LlmError, resolveRetryPolicy } from '@deepseek-ai/dsh-llm';
import { binding } from './binding.js';
import { call, settle, toLlmError } from './failure.js';
import { resolveImages } from './images.js';

/**
 * @import { GenerateOptions, LlmModelInfo, LlmProviderInfo, LlmResolvedModelInfo, ResolvedRetryPolicy, StreamChunk } from '@deepseek-ai/dsh-llm'
 * @import { AdapterHooks, AttachmentReader, AntigravityAcpAdapter as AntigravityAcpAdapterDeclared } from '../index.js'
 * @import { NativeProvider } from './binding.js'
 */

/** @type {number | undefined} the most chunks one crossing of the boundary carries, once read. */
let batchSize;

/**
 * The most chunks one crossing of the boundary carries: the binding's `DEFAULT_BATCH`
 * (`src/stream.rs`), read from the addon on the first stream.
 * @returns {number}
 */
function streamBatch() {
  batchSize ??= binding().DEFAULT_BATCH;
  return batchSize;
}

/** @implements {AntigravityAcpAdapterDeclared} `index.d.ts`'s declaration, checked here. */
export class AntigravityAcpAdapter extends LlmAdapter {
  /** @type {NativeProvider} the native `Provider`. */
  #native;
  /** @type {() => AttachmentReader | undefined} the attachment service, when the host has one (read per call). */
  #attachments;
  /** @type {Promise<void> | undefined} */
  #disposing;
  /** @type {AdapterHooks} */
  #hooks;

  /**
   * @param {string} configJson - the plugin config, as the Rust `PluginConfig` reads it.
   * @param {() => AttachmentReader | undefined} [attachments] - returns DSH's attachment
   *   service, or `undefined`.
   * @param {AdapterHooks} [hooks] - tests only: `onStream` sees each
   *   native stream handle (so a test can hold it and prove `close()`, not the garbage
   *   collector, ended it). The plugin passes none.
   * @param {(line: string) => void} [log] - told each line of an install a turn starts
   *   (its steps, and a progress line every few seconds); the plugin passes DSH's logger.
   * @throws {LlmError} `ACP_INVALID_CONFIG` naming the field, for a refused config;
   *   `ACP_PLATFORM_UNSUPPORTED` when no addon fits this platform (the first construction
   *   loads the addon).
   */
  constructor(configJson, attachments = () => undefined, hooks = {}, log = undefined) {
    super();
    this.#native = call(() => new (binding().Provider)(configJson, log));
    this.#attachments = attachments;
    this.#hooks = hooks;
  }

  /**
   * @param {string} provider
   * @returns {LlmProviderInfo}
   */
  providerInfo(provider) {
    return JSON.parse(call(() => this.#native.providerInfo(provider)));
  }

  /**
   * @param {string} provider
   * @returns {ResolvedRetryPolicy | undefined}
   */
  providerRetryPolicy(provider) {
    const policy = JSON.parse(call(() => this.#native.providerRetryPolicy(provider)));
    return policy === null ? undefined : resolveRetryPolicy(policy, `antigravity-acp.${provider}.retryPolicy`);
  }

  /**
   * @param {string} provider
   * @returns {Promise<readonly LlmModelInfo[]>}
   */
  async listModels(provider) {
    return settle(await this.#native.listModels(provider).catch((error) => Promise.reject(toLlmError(error))));
  }

  /**
   * @param {string} provider
   * @param {string} model
   * @param {AbortSignal} [signal] - already aborted: rejects `ABORTED` (DSH's runtime
   *   resolves the model before each stream, and would read the signal's own DOMException
   *   as code `UNKNOWN`).
   * @returns {Promise<LlmResolvedModelInfo>}
   */
  async resolveModel(provider, model, signal) {
    if (signal?.aborted) throw new LlmError('the model lookup was aborted', 'ABORTED');
    // DSH resolves the model before every stream: answered at once when the adapter
    // knows it without waiting, with no trip through the event loop.
    const now = call(() => this.#native.resolveModelNow(provider, model));
    if (now !== null) return settle(now);
    return settle(await this.#native.resolveModel(provider, model).catch((error) => Promise.reject(toLlmError(error))));
  }

  /**
   * Stream one model call: DSH's chunks as Rust produced them, a batch per crossing.
   * @param {GenerateOptions} options
   * @returns {AsyncGenerator<StreamChunk, void, undefined>}
   */
  async *stream(options) {
    const { signal, ...request } = options;
    const images = await resolveImages(request.messages, this.#attachments(), signal);
    // Aborted while the images were read: an aborted finish, not a missing attachment.
    if (signal?.aborted) throw new LlmError('the request was aborted', 'ABORTED');
    const handle = call(() =>
      this.#native.stream(JSON.stringify(request), images === undefined ? null : JSON.stringify(images)),
    );
    this.#hooks.onStream?.(handle);
    const abort = () => handle.abort();
    signal?.addEventListener('abort', abort, { once: true });
    if (signal?.aborted) abort();
    // After finish(tool-calls) the adapter's turn stays parked for DSH's results, and
    // DSH's abort of the run (its loop cancels the turn's signal, the one it gave this
    // request) must still end that turn (C48): the listener stays, once, for that case.
    let parked = false;
    const max = streamBatch();
    try {
      for (;;) {
        const batch = settle(await handle.nextBatch(max).catch((error) => Promise.reject(toLlmError(error))));
        if (batch.length === 0) return;
        for (const chunk of batch) {
          parked = chunk.type === 'finish' && chunk.reason?.kind === 'tool-calls';
          yield chunk;
        }
        // The finish is the stream's last chunk: no crossing to learn that it ended.
        if (batch.at(-1).type === 'finish') return;
      }
    } finally {
      if (!parked) signal?.removeEventListener('abort', abort);
      handle.close();
    }
  }

  /**
   * Tear down every turn, process and scratch directory; settles once all are gone.
   * @returns {Promise<void>}
   */
  dispose() {
    this.#disposing ??= this.#native.dispose().then(
      (json) => void settle(json),
      (error) => Promise.reject(toLlmError(error)),
    );
    return this.#disposing;
  }
}
