/**
 * DSH requests as DSH builds them: messages from dsh-llm's own constructors, in both
 * tool-result shapes (0.1.x `createToolResultMessage`, 0.2.x `role: 'tool'`).
 * @module support/requests
 */
import { createToolResultMessage, createUserMessage } from '@deepseek-ai/dsh-llm';

export const PROVIDER = 'antigravity-acp';
export const MODEL = 'server-default';

/** A user message of one text block. */
export const user = (text) => createUserMessage({ content: [{ type: 'text', text }], source: { kind: 'user' } });

/** The assistant message DSH's loop appends after a generation. */
export function assistant(blocks) {
  return Object.freeze({
    id: `assistant-${Math.random().toString(36).slice(2)}`,
    role: 'assistant',
    content: blocks,
    source: { kind: 'model', provider: PROVIDER, model: MODEL },
  });
}

/**
 * A tool result in the shape of one DSH version.
 * @param {'0.1' | '0.2'} shape
 * @param {string} callId
 * @param {string} text
 * @param {boolean} isError
 */
export function toolResult(shape, callId, text, isError = false) {
  const content = [{ type: 'text', text }];
  if (shape === '0.1') return createToolResultMessage({ callId, content, isError });
  return Object.freeze({
    id: `tool-${callId}`,
    role: 'tool',
    toolCallId: callId,
    content,
    isError,
    source: { kind: 'tool', callId },
  });
}

/** A conversation request. */
export const request = (messages, extra = {}) => ({ provider: PROVIDER, model: MODEL, messages, ...extra });
