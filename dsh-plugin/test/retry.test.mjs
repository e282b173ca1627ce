// C51 in DSH's real retry executor: `@deepseek-ai/dsh-llm-retry` mounted (with
// `@deepseek-ai/dsh-agent`'s registry, which it injects), fed the failures of real streams
// and the route's policy as DSH resolved it. The agent loop (dsh-agent-loop, not mounted
// here) hands a failed step to the `agent/request-error` waterfall; the test emits it the
// same way, with a minimal agent session. A failure after streamed output is delegated
// (not retried); an empty response is retried.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AgentRegistry from '@deepseek-ai/dsh-agent';
import * as llmRetry from '@deepseek-ai/dsh-llm-retry';
import { drain } from '../support/checker.mjs';
import { fakeHost } from '../support/host.mjs';
import { request, user } from '../support/requests.mjs';
import { within } from '../support/wait.mjs';

const DELEGATED = Symbol('delegated to the next recovery policy');

/** What the agent loop asks DSH's recovery waterfall after a failed step. */
function requestError(ctx, failure, retryPolicy) {
  const events = [];
  const agent = { session: { events, append: (type, data) => events.push({ type, data }) } };
  const payload = {
    agent,
    turn: 1,
    step: 1,
    provider: 'antigravity-acp',
    failure,
    retryPolicy,
    signal: new AbortController().signal,
  };
  return { events, decision: ctx.waterfall('agent/request-error', payload, async () => DELEGATED) };
}

test('DSH retry executor: a failure after streamed output is not retried, an empty response is', async (t) => {
  const { host } = await fakeHost(t, {
    turns: [
      { match: { prompt_contains: 'start then refuse' }, steps: [{ text: 'Partial answer' }], stop: 'refusal' },
      { match: { prompt_contains: 'say nothing' }, steps: [] },
    ],
  });
  host.ctx.plugin(AgentRegistry);
  const retry = host.ctx.plugin(llmRetry);
  await retry.await?.();
  try {
    const policy = host.llm.providerRetryPolicy('antigravity-acp');
    assert.deepEqual([...policy.retryableCodes], ['EMPTY_RESPONSE']);

    const refused = await drain(host.llm.stream(request([user('Please start then refuse')])));
    assert.equal(refused.text, 'Partial answer', 'output was streamed before the failure');
    assert.equal(refused.finish.kind, 'error');
    assert.equal(refused.finish.failure.code, 'ACP_REFUSAL');
    const afterOutput = requestError(host.ctx, refused.finish.failure, policy);
    assert.equal(await within(afterOutput.decision, 'the recovery decision'), DELEGATED, 'not retried');
    assert.deepEqual(afterOutput.events, [], 'no retry was scheduled');

    const empty = await drain(host.llm.stream(request([user('Please say nothing')])));
    assert.equal(empty.finish.kind, 'error');
    assert.equal(empty.finish.failure.code, 'EMPTY_RESPONSE');
    assert.deepEqual(empty.blocks, []);
    const retried = requestError(host.ctx, empty.finish.failure, policy);
    assert.deepEqual(await within(retried.decision, 'the recovery decision'), { kind: 'retry' });
    assert.deepEqual(
      retried.events.map((e) => e.type),
      ['llm/retry', 'llm/retry-started'],
    );
  } finally {
    await retry.dispose();
    await host.stop();
  }
});
