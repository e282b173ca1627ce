/**
 * A real DSH host in miniature: a Cordis `Context` with DSH's `LlmRuntime` (the smallest
 * host DSH's own packages run in), the plugin mounted in it, and
 * optionally an in-memory attachment service.
 * @module support/host
 */
import { Context } from '@deepseek-ai/cordis';
import { LlmRuntime } from '@deepseek-ai/dsh-llm';
import { AttachmentStore } from '@deepseek-ai/dsh-attachment';
import plugin from '../index.js';
import { fakeServer } from './fake.mjs';
import { eventually } from './wait.mjs';

/**
 * Start a host with the plugin mounted.
 * @param {object} plugin - the plugin module (default export of the package).
 * @param {object} config - the plugin's config.
 * @param {{attachments?: Map<string, {mediaType: string, data: Uint8Array, onRead?: () => void}>}} [options]
 * @returns {Promise<{ctx: any, fiber: any, llm: any, stop(): Promise<void>}>}
 */
export async function startHost(plugin, config, options = {}) {
  const ctx = new Context();
  ctx.plugin(LlmRuntime);
  if (options.attachments) ctx.plugin(memoryAttachments(options.attachments));
  await ctx.start?.();
  await eventually(() => ctx.get('llm') !== undefined, 'the llm service');
  const fiber = ctx.plugin(plugin, config);
  await fiber.await?.();
  const provider = config.provider ?? 'antigravity-acp';
  await eventually(() => ctx.llm.listProviders().some((p) => p.id === provider), 'the adapter registration');
  return {
    ctx,
    fiber,
    llm: ctx.llm,
    stop: async () => {
      await fiber.dispose();
      await ctx.root?.dispose?.();
    },
  };
}

/**
 * A Cordis plugin providing `attachments` from memory.
 * @param {Map<string, {mediaType: string, data: Uint8Array}>} images - by attachment id.
 */
function memoryAttachments(images) {
  return class MemoryAttachments extends AttachmentStore {
    imageLimits = {
      maxImageBytes: 1 << 20,
      maxImagesPerMessage: 8,
      maxMessageImageBytes: 1 << 22,
      maxImagePixels: 1 << 24,
      maxImageDimension: 4096,
      mediaTypes: ['image/png'],
    };
    async validateImage() {}
    async saveImage() {
      throw new Error('read-only');
    }
    async readImage(ref, signal) {
      signal?.throwIfAborted();
      const image = images.get(ref.attachmentId);
      if (!image) throw new Error(`no attachment ${ref.attachmentId}`);
      image.onRead?.();
      signal?.throwIfAborted();
      return { ref: { ...ref, mediaType: image.mediaType }, data: image.data };
    }
  };
}

/**
 * A fake server for `script` and a host with the plugin mounted on it (the fake's
 * scratch root as `scratchRoot`); the fake's folder is removed after the test.
 * @param {import('node:test').TestContext} t - the test.
 * @param {object} script - the fake's script.
 * @param {{config?: object, attachments?: Map<string, any>}} [options] - more plugin config, an attachment store.
 * @returns {Promise<{fake: ReturnType<typeof fakeServer>, host: Awaited<ReturnType<typeof startHost>>}>}
 */
export async function fakeHost(t, script, options = {}) {
  const fake = fakeServer(script);
  t.after(() => fake.remove());
  const config = { server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow, ...options.config };
  const host = await startHost(plugin, config, { attachments: options.attachments });
  return { fake, host };
}
