/**
 * The binding's failures as DSH's `LlmError`s. A synchronous call throws an error
 * carrying `code`; an async one resolves to an envelope, `{ok}` or `{error: {code,
 * message}}` (napi cannot reject with a custom code). Either becomes
 * `new LlmError(message, code)`; anything without a code is the binding's own fault,
 * `ACP_INTERNAL`.
 * @module antigravity-acp-dsh/lib/failure
 */
import { LlmError } from '@deepseek-ai/dsh-llm';

/**
 * Unwrap an async call's envelope.
 * @param {string} json - what the binding resolved to.
 * @returns {any} the `ok` value.
 * @throws {LlmError} the envelope's error.
 */
export function settle(json) {
  const outcome = JSON.parse(json);
  if (outcome.error !== undefined) throw new LlmError(outcome.error.message, outcome.error.code);
  return outcome.ok;
}

/**
 * Run a synchronous binding call; what it throws becomes an `LlmError`.
 * @template T
 * @param {() => T} call - the call.
 * @returns {T} its result.
 */
export function call(call) {
  try {
    return call();
  } catch (error) {
    throw toLlmError(error);
  }
}

/**
 * An `LlmError` for anything the binding threw or rejected with.
 * @param {unknown} error - what was thrown.
 * @returns {LlmError} the same failure in DSH's shape.
 */
export function toLlmError(error) {
  if (error instanceof LlmError) return error;
  const message = error instanceof Error && error.message ? error.message : String(error);
  const raw = /** @type {{code?: unknown} | null | undefined} */ (error)?.code;
  const code = typeof raw === 'string' && /^[A-Z][A-Z0-9_]*$/.test(raw) ? raw : 'ACP_INTERNAL';
  return new LlmError(message, code, { cause: error });
}
