/**
 * The benchmark's floor for DSH's own runtime: a Cordis plugin registering, beside the
 * binding's adapter in the same host, an `LlmAdapter` whose `stream` is a plain JS async
 * generator replaying chunks captured from a binding stream (the same objects, so the
 * same shapes and count): one stream for every request, or one per kind of request,
 * chosen by a function of the request. Read through `ctx.llm.stream` like the binding,
 * it costs DSH's runtime and the consumer's loop and nothing else: no native call, no
 * server.
 * @module bench/js-floor
 */
import { LlmAdapter } from '@deepseek-ai/dsh-llm';

/** The provider route the floor adapter registers. */
export const FLOOR_PROVIDER = 'bench-js-floor';

/**
 * An adapter that replays captured chunks from an async generator on every `stream` call:
 * `chunks` itself, or (given `pick`) `chunks[pick(options)]`.
 */
export class ReplayAdapter extends LlmAdapter {
  /** @type {readonly object[] | Record<string, readonly object[]>} */
  #chunks;
  #pick;

  /**
   * @param {readonly object[] | Record<string, readonly object[]>} chunks - DSH stream
   *   chunks, the finish last; or such lists by key.
   * @param {(options: object) => string} [pick] - the key of a request's list.
   */
  constructor(chunks, pick) {
    super();
    this.#chunks = chunks;
    this.#pick = pick;
  }

  async *stream(options) {
    const chunks = this.#pick === undefined ? this.#chunks : this.#chunks[this.#pick(options)];
    if (chunks === undefined) throw new Error('the floor has no captured stream for this request');
    for (const chunk of chunks) yield chunk;
  }
}

/**
 * The Cordis plugin mounting a `ReplayAdapter` of `chunks` (and `pick`) for `FLOOR_PROVIDER`.
 * @param {readonly object[] | Record<string, readonly object[]>} chunks
 * @param {(options: object) => string} [pick]
 */
export function floorPlugin(chunks, pick) {
  return {
    name: 'bench-js-floor',
    inject: ['llm'],
    apply(ctx) {
      ctx.llm.registerAdapter([FLOOR_PROVIDER], new ReplayAdapter(chunks, pick));
    },
  };
}
