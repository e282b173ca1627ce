// The model catalogue through DSH's runtime, and the retry policy DSH resolves for the
// route (C51: only EMPTY_RESPONSE, which by construction streamed nothing and ran no tool).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { drain } from '../support/checker.mjs';
import { fakeHost } from '../support/host.mjs';
import { request, user } from '../support/requests.mjs';

test('listModels runs discovery; resolveModel then answers from the catalogue and the reported window', async (t) => {
  const { fake, host } = await fakeHost(t, {
    default_model: 'gemini-3.8-flash-low',
    turns: [
      { match: { prompt_contains: 'how big' }, steps: [{ usage: { used: 1200, size: 200000 } }, { text: 'Big.' }] },
    ],
  });
  try {
    const models = await host.llm.listModels('antigravity-acp');
    assert.equal(models[0].id, 'server-default');
    assert.ok(models.length > 1, 'the server catalogue follows server-default');
    assert.ok(models.every((m) => m.provider === 'antigravity-acp' && m.name));
    const listed = models[1];
    const resolved = await host.llm.resolveModelInfo('antigravity-acp', listed.id);
    assert.equal(resolved.name, listed.name, 'resolveModel names a discovered model as the catalogue does');
    assert.deepEqual(resolved.inputModalities, ['text', 'image']);

    assert.equal((await host.llm.resolveModelInfo('antigravity-acp', 'server-default')).context, undefined);
    const out = await drain(host.llm.stream(request([user('Tell me how big')])));
    assert.equal(out.text, 'Big.');
    const after = await host.llm.resolveModelInfo('antigravity-acp', 'server-default');
    assert.deepEqual(after.context, { contextWindow: 200000 }, 'the window the server reported');
    assert.equal(fake.journal().length, 1, 'discovery and the turn share one process');
  } finally {
    await host.stop();
  }
  assert.deepEqual(fake.pids(), []);
});

test('DSH resolves the route retry policy to EMPTY_RESPONSE only, at most twice', async (t) => {
  const { host } = await fakeHost(t, {});
  try {
    const policy = host.llm.providerRetryPolicy('antigravity-acp');
    assert.equal(policy.mode, 'normal');
    assert.deepEqual([...policy.retryableCodes], ['EMPTY_RESPONSE']);
    assert.equal(policy.maxRetries, 2);
    assert.deepEqual(host.llm.listProviders(), [{ id: 'antigravity-acp', name: 'Google Antigravity (ACP)' }]);
  } finally {
    await host.stop();
  }
});
