// What dsh-llm 0.1.1 changed about calling an adapter, on the run that has 0.1.1-rc.2
// (scripts/test.mjs; on 0.1.0-rc.8 these skip, listed in expected-skips.txt). Its runtime
// now dispatches every call through `LlmAdapter.prepareCall`, which the plugin inherits
// (DSH's default: resolveModel, then stream), and reads the model's `inputModalities` from
// that resolution: a model whose list lacks `image` has its images turned into text before
// the adapter sees them. So: a turn streamed through it works, the runtime's own
// `prepareCall` sees text and images for server-default and for a discovered model, and an
// image sent on such a call reaches the server as an ACP image block (what crossed the wire,
// from the fake's journal), not DSH's text placeholder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createUserMessage, LlmAdapter } from '@deepseek-ai/dsh-llm';
import { AntigravityAcpAdapter } from '../lib/adapter.js';
import { drain } from '../support/checker.mjs';
import { fakeHost } from '../support/host.mjs';
import { MODEL, PROVIDER, request, user } from '../support/requests.mjs';

const skip = typeof LlmAdapter.prototype.prepareCall !== 'function' && 'dsh-llm 0.1.0-rc.8 has no prepareCall';

// A 1x1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const ref = { attachmentId: 'sha256:0123456789abcdef', mediaType: 'image/png', bytes: PNG.length, width: 1, height: 1 };

test('every stream goes through the prepareCall the adapter inherits, and the turn works', { skip }, async (t) => {
  assert.ok(!Object.hasOwn(AntigravityAcpAdapter.prototype, 'prepareCall'), 'the plugin keeps DSH’s own');
  const inherited = LlmAdapter.prototype.prepareCall;
  /** @type {string[][]} */
  const calls = [];
  // Counts the runtime's calls, then does what the plugin does: DSH's own.
  AntigravityAcpAdapter.prototype.prepareCall = function prepareCall(...args) {
    calls.push(args.slice(0, 2));
    return inherited.apply(this, args);
  };
  t.after(() => delete AntigravityAcpAdapter.prototype.prepareCall);
  const { host } = await fakeHost(t, {
    turns: [{ match: { prompt_contains: 'say hello' }, steps: [{ text: 'Hello through prepareCall.' }] }],
  });
  try {
    const out = await drain(host.llm.stream(request([user('Please say hello')])));
    assert.deepEqual(out.finish, { kind: 'stop' });
    assert.equal(out.text, 'Hello through prepareCall.');
    assert.deepEqual(calls, [[PROVIDER, MODEL]], 'the runtime prepared the call once, then streamed it');
  } finally {
    await host.stop();
  }
});

test("the runtime's prepareCall sees text and images for server-default and a discovered model", {
  skip,
}, async (t) => {
  const { host } = await fakeHost(t, {
    default_model: 'gemini-3.8-flash-low',
    turns: [{ match: { prompt_contains: 'say hello' }, steps: [{ text: 'Prepared.' }] }],
  });
  try {
    const prepared = await host.llm.prepareCall({ provider: PROVIDER, model: MODEL });
    assert.deepEqual(prepared.inputModalities, ['text', 'image']);
    const out = await drain(prepared.stream(request([user('Please say hello')])));
    assert.equal(out.text, 'Prepared.');
    const listed = (await host.llm.listModels(PROVIDER)).find((m) => m.id !== MODEL);
    assert.ok(listed, 'discovery listed a model besides server-default');
    assert.deepEqual(listed.inputModalities, ['text', 'image']);
    const other = await host.llm.prepareCall({ provider: PROVIDER, model: listed.id });
    assert.deepEqual(other.inputModalities, ['text', 'image'], `${listed.id} as resolveModel says it`);
  } finally {
    await host.stop();
  }
});

test('an image sent through the runtime reaches the server as an ACP image block, not as text', {
  skip,
}, async (t) => {
  const attachments = new Map([[ref.attachmentId, { mediaType: 'image/png', data: new Uint8Array(PNG) }]]);
  const { fake, host } = await fakeHost(
    t,
    { turns: [{ match: { prompt_contains: 'this picture' }, steps: [{ text: 'One pixel.' }] }] },
    { attachments },
  );
  try {
    const message = createUserMessage({
      content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image', attachment: ref },
      ],
      source: { kind: 'user' },
    });
    const out = await drain(host.llm.stream(request([message])));
    assert.deepEqual(out.finish, { kind: 'stop' });
    const prompt = fake.frames('in').find((f) => f.method === 'session/prompt');
    assert.ok(prompt, 'the server got a prompt');
    const blocks = prompt.params.prompt;
    assert.deepEqual(
      blocks.filter((b) => b.type === 'image').map((b) => [b.mimeType, b.data]),
      [['image/png', PNG.toString('base64')]],
      'one ACP image block with the bytes',
    );
    const texts = blocks.filter((b) => b.type === 'text').map((b) => b.text);
    assert.ok(!texts.some((text) => text.includes('image omitted')), `no placeholder text: ${JSON.stringify(texts)}`);
  } finally {
    await host.stop();
  }
});
