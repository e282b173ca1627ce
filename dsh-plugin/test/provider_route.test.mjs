// C01 through a route of the user's choosing: the plugin mounted with `provider: 'agy'`
// registers that route, and only that one, with DSH's LLM service; DSH's registry accepts
// it only because providerInfo answers with the same id; listModels and resolveModel
// answer for it; and a text turn runs on it. Fails if index.js registers the default
// route, or the adapter answers providerInfo, listModels or resolveModel with a fixed id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { drain } from '../support/checker.mjs';
import { fakeHost } from '../support/host.mjs';
import { MODEL, request, user } from '../support/requests.mjs';

const ROUTE = 'agy';

test('a plugin mounted with provider agy registers agy (not antigravity-acp), answers for it and runs a turn on it', async (t) => {
  const { fake, host } = await fakeHost(
    t,
    { turns: [{ match: { prompt_contains: 'say hello' }, steps: [{ text: 'Hello on agy.' }] }] },
    { config: { provider: ROUTE } },
  );
  try {
    assert.deepEqual(
      host.llm.listProviders(),
      [{ id: ROUTE, name: 'Google Antigravity (ACP)' }],
      "providerInfo('agy') is agy's, and only agy is registered",
    );
    assert.equal(host.llm.providerRetryPolicy(ROUTE).mode, 'normal', 'the retry policy is registered under agy');
    await assert.rejects(
      host.llm.listModels('antigravity-acp'),
      (error) => error.code === 'NO_ADAPTER',
      'the default route is not registered',
    );

    const models = await host.llm.listModels(ROUTE);
    assert.equal(models[0].id, MODEL);
    assert.ok(
      models.every((m) => m.provider === ROUTE),
      'every listed model names the agy route',
    );
    const resolved = await host.llm.resolveModelInfo(ROUTE, MODEL);
    assert.equal(resolved.provider, ROUTE);
    assert.equal(resolved.id, MODEL);

    const out = await drain(host.llm.stream(request([user('Please say hello')], { provider: ROUTE })));
    assert.deepEqual(out.finish, { kind: 'stop' });
    assert.deepEqual(out.blocks, [{ type: 'text', text: 'Hello on agy.' }]);
    assert.deepEqual(
      fake.methods().filter((m) => m === 'session/prompt'),
      ['session/prompt'],
      'the turn reached the server',
    );

    const elsewhere = await drain(host.llm.stream(request([user('Please say hello')])));
    assert.equal(elsewhere.finish.kind, 'error');
    assert.equal(elsewhere.finish.failure.code, 'NO_ADAPTER', 'a request for antigravity-acp finds no adapter');
  } finally {
    await host.stop();
  }
});
