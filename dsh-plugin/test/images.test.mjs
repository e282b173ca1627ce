// Images: the glue reads each image block's bytes through DSH's attachment service and
// the server receives them as an ACP image block; without the service (it is an optional
// dependency) the adapter refuses the request with ACP_ATTACHMENT_UNAVAILABLE.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createUserMessage } from '@deepseek-ai/dsh-llm';
import { drain } from '../support/checker.mjs';
import { fakeHost } from '../support/host.mjs';
import { request } from '../support/requests.mjs';

// A 1x1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const ref = { attachmentId: 'sha256-test-image', mediaType: 'image/png', bytes: PNG.length, width: 1, height: 1 };
const withImage = () =>
  createUserMessage({
    content: [
      { type: 'text', text: 'What is in this picture?' },
      { type: 'image', attachment: ref },
    ],
    source: { kind: 'user' },
  });
const script = { turns: [{ match: { prompt_contains: 'this picture' }, steps: [{ text: 'One pixel.' }] }] };

test('an image block is read through ctx.attachments and reaches the server as an ACP image', async (t) => {
  const attachments = new Map([[ref.attachmentId, { mediaType: 'image/png', data: new Uint8Array(PNG) }]]);
  const { fake, host } = await fakeHost(t, script, { attachments });
  try {
    const out = await drain(host.llm.stream(request([withImage()])));
    assert.deepEqual(out.finish, { kind: 'stop' });
    assert.equal(out.text, 'One pixel.');
    const prompt = fake.frames('in').find((f) => f.method === 'session/prompt');
    const images = prompt.params.prompt.filter((block) => block.type === 'image');
    assert.deepEqual(
      images.map((i) => [i.mimeType, i.data]),
      [['image/png', PNG.toString('base64')]],
    );
  } finally {
    await host.stop();
  }
});

test('without an attachment service an image request fails ACP_ATTACHMENT_UNAVAILABLE before any process starts', async (t) => {
  const { fake, host } = await fakeHost(t, script);
  try {
    const out = await drain(host.llm.stream(request([withImage()])));
    assert.equal(out.finish.kind, 'error');
    assert.equal(out.finish.failure.code, 'ACP_ATTACHMENT_UNAVAILABLE');
    assert.deepEqual(fake.journal(), []);
  } finally {
    await host.stop();
  }
});

test('a request aborted while its images are read ends aborted (ABORTED), not as a missing attachment', async (t) => {
  const controller = new AbortController();
  // An attachment store whose read aborts the request (the user pressed stop meanwhile).
  const attachments = new Map([
    [ref.attachmentId, { mediaType: 'image/png', data: new Uint8Array(PNG), onRead: () => controller.abort() }],
  ]);
  const { fake, host } = await fakeHost(t, script, { attachments });
  try {
    const out = await drain(host.llm.stream(request([withImage()], { signal: controller.signal })));
    assert.equal(out.finish.kind, 'aborted');
    assert.equal(out.finish.failure.code, 'ABORTED');
    assert.deepEqual(fake.journal(), [], 'no server process was started');
  } finally {
    await host.stop();
  }
});
