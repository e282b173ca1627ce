// Tool turns across two `ctx.llm.stream` calls: the first ends `tool-calls` with DSH's
// tool call, the second carries the assistant's message and DSH's tool result (both
// shapes DSH has used) and the server's turn goes on from the parked MCP call. What the
// server received is read from the fake's journal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentLoop, drain } from '../support/checker.mjs';
import { fakeHost } from '../support/host.mjs';
import { assistant, request, toolResult, user } from '../support/requests.mjs';
import { brokenExpectations, callTurn, ECHO, toolCallAnswers } from '../support/journal.mjs';

for (const shape of ['0.1', '0.2']) {
  test(`a tool turn completes across two streams (tool result in the ${shape}.x shape)`, async (t) => {
    const turn = callTurn({
      prompt: 'use the echo tool',
      tool: 'echo',
      args: { text: 'PROBE-9' },
      contains: 'PROBE-9 echoed',
      text: 'The tool said PROBE-9.',
    });
    const { fake, host } = await fakeHost(t, { turns: [turn] });
    try {
      const asked = user('Please use the echo tool');
      const first = await drain(host.llm.stream(request([asked], { tools: [ECHO] })));
      assert.deepEqual(first.finish, { kind: 'tool-calls' });
      assert.equal(first.toolCalls.length, 1);
      const [call] = first.toolCalls;
      assert.equal(call.name, 'echo');
      assert.deepEqual(JSON.parse(call.arguments), { text: 'PROBE-9' });

      const history = [asked, assistant(first.blocks), toolResult(shape, call.id, 'PROBE-9 echoed')];
      const second = await drain(host.llm.stream(request(history, { tools: [ECHO] })));
      assert.deepEqual(second.finish, { kind: 'stop' });
      assert.equal(second.text, 'The tool said PROBE-9.');

      const answers = toolCallAnswers(fake);
      assert.equal(answers.length, 1);
      assert.equal(answers[0].result.isError, false);
      assert.deepEqual(brokenExpectations(fake), []);
      assert.equal(fake.methods().filter((m) => m === 'session/prompt').length, 1, 'one server turn for the exchange');
    } finally {
      await host.stop();
    }
    assert.deepEqual(fake.pids(), []);
    assert.deepEqual(fake.scratchLeft(), []);
  });
}

test('a denied tool call (isError: true) reaches the server as an MCP error result', async (t) => {
  const tool = {
    name: 'delete_file',
    description: 'Deletes a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  };
  const turn = callTurn({
    prompt: 'delete the temp file',
    tool: 'delete_file',
    args: { path: 'notes.tmp' },
    isError: true,
    contains: 'permission denied',
    text: 'I could not delete it.',
  });
  const { fake, host } = await fakeHost(t, { turns: [turn] });
  try {
    const asked = user('Please delete the temp file');
    const first = await drain(host.llm.stream(request([asked], { tools: [tool] })));
    assert.deepEqual(first.finish, { kind: 'tool-calls' });
    const [call] = first.toolCalls;
    const denied = toolResult('0.1', call.id, 'permission denied by the user', true);
    const second = await drain(host.llm.stream(request([asked, assistant(first.blocks), denied], { tools: [tool] })));
    assert.deepEqual(second.finish, { kind: 'stop' });
    assert.equal(second.text, 'I could not delete it.');
    const answers = toolCallAnswers(fake);
    assert.equal(answers.length, 1);
    assert.equal(answers[0].result.isError, true, 'the MCP result is an error result');
    assert.deepEqual(brokenExpectations(fake), []);
  } finally {
    await host.stop();
  }
});

test('parallel tool calls of one server turn each get their own result, in one or two rounds', async (t) => {
  const { fake, host } = await fakeHost(t, {
    turns: [
      {
        match: { prompt_contains: 'echo twice' },
        steps: [
          {
            parallel: [
              { tool: 'echo', args: { text: 'A' } },
              { tool: 'echo', args: { text: 'B' } },
            ],
          },
          { expect_result: { is_error: false, contains: 'echoed' } },
          { text: 'Both done.' },
        ],
      },
    ],
  });
  try {
    // Whether both calls come in one round or one per round depends on whether the second
    // reached the bridge before the adapter ended the first (scenarios/tool_calls/
    // parallel_calls.yaml): either way each call is answered once, in one server turn.
    const loop = await agentLoop(
      host.llm,
      (messages) => request(messages, { tools: [ECHO] }),
      [user('Please echo twice')],
      (call) => toolResult('0.2', call.id, `${JSON.parse(call.arguments).text} echoed`),
    );
    assert.deepEqual(loop.last.finish, { kind: 'stop' });
    assert.equal(loop.last.text, 'Both done.');
    assert.deepEqual(loop.calls.map((c) => JSON.parse(c.arguments).text).sort(), ['A', 'B']);
    const answers = toolCallAnswers(fake);
    assert.deepEqual(answers.map((a) => a.result.content[0].text).sort(), ['A echoed', 'B echoed']);
    assert.equal(fake.methods().filter((m) => m === 'session/prompt').length, 1);
    assert.deepEqual(brokenExpectations(fake), []);
  } finally {
    await host.stop();
  }
});
