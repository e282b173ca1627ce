/**
 * Waiting on an event with a bound, never a blind sleep: `eventually` re-checks a
 * condition until it holds and fails, naming it, once the bound has passed.
 * @module support/wait
 */
import { setTimeout as delay } from 'node:timers/promises';

/**
 * Wait until `check()` is truthy.
 * @param {() => unknown | Promise<unknown>} check - the condition.
 * @param {string} what - what is awaited, for the failure message.
 * @param {number} [boundMs] - how long to wait at most.
 * @returns {Promise<any>} the first truthy value.
 */
export async function eventually(check, what, boundMs = 10_000) {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${boundMs} ms waiting for ${what}`);
    await delay(10);
  }
}

/**
 * Race `promise` against a bound.
 * @template T
 * @param {Promise<T>} promise
 * @param {string} what
 * @param {number} [boundMs]
 * @returns {Promise<T>}
 */
export async function within(promise, what, boundMs = 20_000) {
  let timer;
  const bound = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${boundMs} ms: ${what}`)), boundMs);
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}
