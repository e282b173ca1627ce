// A text turn through DSH's real runtime: the fake's text reaches `ctx.llm.stream` as one
// text block and a `stop` finish, no usage invented, and the server got one prompt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { drain } from '../support/checker.mjs';
import { fakeHost } from '../support/host.mjs';
import { request, user } from '../support/requests.mjs';

test('a text turn streams the server text as one text block and stops', async (t) => {
  const { fake, host } = await fakeHost(t, {
    turns: [
      {
        match: { prompt_contains: 'say hello' },
        steps: [{ thought: 'Greeting.' }, { text: 'Hello ' }, { text: 'there.' }],
      },
    ],
  });
  try {
    const out = await drain(host.llm.stream(request([user('Please say hello')])));
    assert.deepEqual(out.finish, { kind: 'stop' });
    assert.deepEqual(out.blocks, [
      { type: 'reasoning', text: 'Greeting.' },
      { type: 'text', text: 'Hello there.' },
    ]);
    assert.equal(out.assembler.usage, undefined, 'the adapter invents no usage');
    assert.deepEqual(
      fake.methods().filter((m) => m.startsWith('session/prompt')),
      ['session/prompt'],
    );
  } finally {
    await host.stop();
  }
  assert.deepEqual(fake.pids(), [], 'no fake process outlives the plugin scope');
  assert.deepEqual(fake.scratchLeft(), [], 'no scratch directory outlives the plugin scope');
});
