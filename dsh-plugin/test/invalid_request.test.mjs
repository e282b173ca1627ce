// A request that does not have DSH's shape is refused ACP_INVALID_REQUEST, and the refusal
// names only serde's category and the position: never serde's text, which quotes the value
// it refused (here a prompt). Through DSH's runtime (an error finish) and the raw binding
// (a thrown error), for the request and for the images.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LlmError } from '@deepseek-ai/dsh-llm';
import { AntigravityAcpAdapter } from '../index.js';
import { binding as loadBinding } from '../lib/binding.js';
import { drain } from '../support/checker.mjs';
import { fakeHost } from '../support/host.mjs';
import { MODEL, PROVIDER } from '../support/requests.mjs';

const binding = loadBinding();

const SECRET = 'my secret prompt text';
/** A user message whose content is a string, not DSH's block array. */
const stringContent = { id: 'user-1', role: 'user', content: SECRET, source: { kind: 'user' } };

test('a message whose content is a string finishes ACP_INVALID_REQUEST without quoting it, and starts no process', async (t) => {
  const { fake, host } = await fakeHost(t, {});
  try {
    const out = await drain(host.llm.stream({ provider: PROVIDER, model: MODEL, messages: [stringContent] }));
    assert.equal(out.finish.kind, 'error');
    assert.equal(out.finish.failure.code, 'ACP_INVALID_REQUEST');
    assert.match(
      out.finish.failure.message,
      /^the request does not have DSH's shape: a value of the wrong type or shape at line 1 column \d+$/,
    );
    assert.ok(!JSON.stringify(out.chunks).includes('secret'), 'the prompt text is nowhere in the stream');
    assert.deepEqual(fake.journal(), [], 'no server process was started');
  } finally {
    await host.stop();
  }
});

test('the raw binding throws ACP_INVALID_REQUEST without the refused values, for the request, the images and broken JSON', () => {
  const provider = new binding.Provider('{}');
  const request = JSON.stringify({ provider: PROVIDER, model: MODEL, messages: [stringContent] });
  const refused = (run) => {
    try {
      run();
    } catch (error) {
      return error;
    }
    assert.fail('the binding accepted it');
  };
  for (const error of [
    refused(() => provider.stream(request, null)),
    refused(() =>
      provider.stream(
        JSON.stringify({ provider: PROVIDER, model: MODEL, messages: [] }),
        JSON.stringify({ 'sha256-x': SECRET }),
      ),
    ),
    refused(() => provider.stream(`{"provider": "${SECRET}`, null)),
  ]) {
    assert.equal(error.code, 'ACP_INVALID_REQUEST');
    assert.ok(!error.message.includes('secret'), `no value in: ${error.message}`);
  }
});

test("the adapter's stream rejects with LlmError ACP_INVALID_REQUEST without the refused value", async () => {
  const adapter = new AntigravityAcpAdapter('{}');
  try {
    await assert.rejects(
      async () => {
        for await (const chunk of adapter.stream({ provider: PROVIDER, model: MODEL, messages: [stringContent] }))
          assert.fail(`a chunk: ${JSON.stringify(chunk)}`);
      },
      (error) => error instanceof LlmError && error.code === 'ACP_INVALID_REQUEST' && !error.message.includes('secret'),
    );
  } finally {
    await adapter.dispose();
  }
});
