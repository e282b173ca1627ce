/**
 * Image bytes for a request, read through DSH's attachment service (`ctx.attachments`,
 * `@deepseek-ai/dsh-attachment`): every image block of every message, tool results'
 * content included, by attachment id, as `{mediaType, dataBase64}`, the shape the Rust
 * adapter reads. An image that cannot be read is left out, and the adapter refuses the
 * request with `ACP_ATTACHMENT_UNAVAILABLE` (so does a host without the service).
 * @module antigravity-acp-dsh/lib/images
 */

/**
 * Collect the attachment refs of `blocks` (recursively through tool results).
 * @param {readonly any[]} blocks - content blocks.
 * @param {Map<string, any>} refs - filled with attachment id → ref.
 */
function collect(blocks, refs) {
  for (const block of blocks ?? []) {
    if (block?.type === 'image' && block.attachment?.attachmentId) {
      refs.set(block.attachment.attachmentId, block.attachment);
    } else if (block?.type === 'tool-result') {
      collect(block.content, refs);
    }
  }
}

/**
 * Read the bytes of every image `messages` refer to.
 * @param {readonly any[]} messages - DSH's messages.
 * @param {import('../index.js').AttachmentReader | undefined} store - the attachment
 *   service, when the host has one.
 * @param {AbortSignal | undefined} signal - the request's abort signal.
 * @returns {Promise<Record<string, {mediaType: string, dataBase64: string}> | undefined>}
 *   the resolved images (`undefined` when the request has none).
 */
export async function resolveImages(messages, store, signal) {
  const refs = new Map();
  for (const message of messages ?? []) collect(message.content, refs);
  if (refs.size === 0) return undefined;
  /** @type {Record<string, {mediaType: string, dataBase64: string}>} */
  const images = {};
  if (store === undefined) return images;
  await Promise.all(
    [...refs].map(async ([id, ref]) => {
      try {
        const stored = await store.readImage(ref, signal);
        images[id] = {
          mediaType: stored.ref?.mediaType ?? ref.mediaType,
          dataBase64: Buffer.from(stored.data.buffer, stored.data.byteOffset, stored.data.byteLength).toString(
            'base64',
          ),
        };
      } catch {
        // Left out: the adapter names the attachment it could not have.
      }
    }),
  );
  return images;
}
