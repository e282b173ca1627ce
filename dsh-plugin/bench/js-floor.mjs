/**
 * The benchmark's floor for DSH's own runtime: a Cordis plugin registering, beside the
 * binding's adapter in the same host, an `LlmAdapter` whose `stream` is a plain JS async
 * generator replaying chunks captured from one binding stream (the same objects, so the
 * same shapes and count). Read through `ctx.llm.stream` like the binding, it costs DSH's
 * runtime and the consumer's loop and nothing else: no native call, no server.
 * @module bench/js-floor
 */
import { LlmAdapter } from '@deepseek-ai/dsh-llm';

/** The provider route the floor adapter registers. */
export const FLOOR_PROVIDER = 'bench-js-floor';

/** An adapter that replays `chunks` from an async generator on every `stream` call. */
export class ReplayAdapter extends LlmAdapter {
  /** @type {readonly object[]} */
  #chunks;

  /** @param {readonly object[]} chunks - DSH stream chunks, the finish last. */
  constructor(chunks) {
    super();
    this.#chunks = chunks;
  }

  async *stream() {
    for (const chunk of this.#chunks) yield chunk;
  }
}

/**
 * The Cordis plugin mounting a `ReplayAdapter` of `chunks` for `FLOOR_PROVIDER`.
 * @param {readonly object[]} chunks
 */
export function floorPlugin(chunks) {
  return {
    name: 'bench-js-floor',
    inject: ['llm'],
    apply(ctx) {
      ctx.llm.registerAdapter([FLOOR_PROVIDER], new ReplayAdapter(chunks));
    },
  };
}
