// Several calls at once through DSH's runtime: concurrent conversations on one provider,
// and a session-title request while a tool turn is parked waiting for DSH's results.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { drain } from '../support/checker.mjs';
import { fakeHost } from '../support/host.mjs';
import { brokenExpectations, callTurn, ECHO, toolCallAnswers } from '../support/journal.mjs';
import { assistant, request, toolResult, user } from '../support/requests.mjs';

const turns = ['alpha', 'beta', 'gamma'].map((word) => ({
  match: { prompt_contains: `tell me ${word}` },
  steps: [{ text: `${word} answer` }],
}));
const echoTurn = (word) =>
  callTurn({ prompt: `echo ${word}`, tool: 'echo', args: { text: word }, contains: word, text: `${word} echoed back` });

test('concurrent conversations each get their own answer', async (t) => {
  const { fake, host } = await fakeHost(t, { turns: [...turns, echoTurn('one'), echoTurn('two')] });
  try {
    const texts = ['alpha', 'beta', 'gamma'].map((word) =>
      drain(host.llm.stream(request([user(`Please tell me ${word}`)]))),
    );
    const tools = ['one', 'two'].map(async (word) => {
      const asked = user(`Please echo ${word}`);
      const first = await drain(host.llm.stream(request([asked], { tools: [ECHO] })));
      assert.deepEqual(first.finish, { kind: 'tool-calls' });
      const [call] = first.toolCalls;
      const history = [asked, assistant(first.blocks), toolResult('0.1', call.id, `${word}`)];
      return drain(host.llm.stream(request(history, { tools: [ECHO] })));
    });
    const outs = await Promise.all([...texts, ...tools]);
    assert.deepEqual(
      outs.map((o) => [o.finish.kind, o.text]),
      [
        ['stop', 'alpha answer'],
        ['stop', 'beta answer'],
        ['stop', 'gamma answer'],
        ['stop', 'one echoed back'],
        ['stop', 'two echoed back'],
      ],
    );
    assert.equal(toolCallAnswers(fake).length, 2);
    assert.deepEqual(brokenExpectations(fake), []);
  } finally {
    await host.stop();
  }
  assert.deepEqual(fake.pids(), []);
});

test('a session-title request is answered while a tool turn is parked, and the tool turn then completes', async (t) => {
  const { fake, host } = await fakeHost(t, {
    turns: [echoTurn('slowly'), { match: { prompt_contains: 'Title this chat' }, steps: [{ text: 'Echo test' }] }],
  });
  try {
    const asked = user('Please echo slowly');
    const first = await drain(host.llm.stream(request([asked], { tools: [ECHO] })));
    assert.deepEqual(first.finish, { kind: 'tool-calls' });
    // The tool turn is parked (its MCP call waits for DSH): DSH asks for a title meanwhile.
    const title = await drain(host.llm.stream(request([asked, user('Title this chat')], { purpose: 'session-title' })));
    assert.deepEqual(title.finish, { kind: 'stop' });
    assert.equal(title.text, 'Echo test');
    const [call] = first.toolCalls;
    const second = await drain(
      host.llm.stream(
        request([asked, assistant(first.blocks), toolResult('0.2', call.id, 'slowly')], { tools: [ECHO] }),
      ),
    );
    assert.deepEqual(second.finish, { kind: 'stop' });
    assert.equal(second.text, 'slowly echoed back');
    assert.deepEqual(brokenExpectations(fake), []);
  } finally {
    await host.stop();
  }
});
