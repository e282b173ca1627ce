// What a turn costs in crossings of the boundary (BENCHMARKS.md, "Turns through DSH"):
// a stream ends at its finish chunk, with no `nextBatch` call after it only to learn that
// it ended; DSH's per-stream `resolveModel` is answered at once by `resolveModelNow`, with
// the same answer the asynchronous call gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Context } from '@deepseek-ai/cordis';
import { LlmRuntime } from '@deepseek-ai/dsh-llm';
import { AntigravityAcpAdapter } from '../index.js';
import { binding as loadBinding } from '../lib/binding.js';
import { configJson } from '../lib/config.js';
import { settle } from '../lib/failure.js';
import { fakeServer } from '../support/fake.mjs';
import { request, user } from '../support/requests.mjs';
import { eventually } from '../support/wait.mjs';

test('a stream ends at its finish: no nextBatch call after the batch that carried it', async (t) => {
  const fake = fakeServer({ turns: [{ steps: [{ text: 'Hello there.' }] }] });
  t.after(() => fake.remove());
  const batches = [];
  const adapter = new AntigravityAcpAdapter(
    configJson({ server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow }),
    undefined,
    {
      onStream: (handle) => {
        const next = handle.nextBatch.bind(handle);
        handle.nextBatch = async (max) => {
          const json = await next(max);
          batches.push(settle(json).map((chunk) => chunk.type));
          return json;
        };
      },
    },
  );
  const ctx = new Context();
  ctx.plugin(LlmRuntime);
  await eventually(() => ctx.get('llm') !== undefined, 'the llm service');
  ctx.llm.registerAdapter(['antigravity-acp'], adapter);
  try {
    for (let turn = 0; turn < 2; turn++) {
      batches.length = 0;
      const types = [];
      for await (const chunk of ctx.llm.stream(request([user(`Say hello ${turn}`)]))) types.push(chunk.type);
      assert.equal(types.at(-1), 'finish');
      assert.ok(batches.length > 0, 'the stream crossed in batches');
      assert.deepEqual(
        batches.at(-1).at(-1),
        'finish',
        `the last crossing carried the finish: ${JSON.stringify(batches)}`,
      );
      assert.ok(
        batches.every((batch) => batch.length > 0),
        `no crossing came back empty: ${JSON.stringify(batches)}`,
      );
    }
  } finally {
    await adapter.dispose();
  }
});

test('resolveModelNow answers at once, as resolveModel does', async (t) => {
  const fake = fakeServer({ turns: [{ steps: [{ text: 'Hi.' }] }] });
  t.after(() => fake.remove());
  const native = new (loadBinding().Provider)(
    configJson({ provider: 'antigravity-acp', server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow }),
  );
  try {
    const now = native.resolveModelNow('antigravity-acp', 'server-default');
    assert.equal(typeof now, 'string', 'answered without waiting');
    assert.deepEqual(settle(now), settle(await native.resolveModel('antigravity-acp', 'server-default')));
    const refused = JSON.parse(native.resolveModelNow('antigravity-acp', ''));
    assert.equal(refused.error?.code, 'ACP_INVALID_MODEL', 'a refusal comes in the envelope too');
  } finally {
    await native.dispose();
  }
});
