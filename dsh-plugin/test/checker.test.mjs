// The stream-rule checker (support/checker.mjs) on hand-written streams: one valid
// stream of every block type passes, and each rule, broken once, is caught and named. A
// checker that lets one of these through fails here, so every test that drains a stream
// through it proves what it claims.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { drain, streamChecker } from '../support/checker.mjs';

const start = (index, blockType) => ({ type: 'block-start', index, blockType });
const text = (index, t) => ({ type: 'text-delta', index, text: t });
const thought = (index, t) => ({ type: 'reasoning-delta', index, text: t });
const args = (index, argumentsDelta, id = 'call-1', name = 'echo') => ({
  type: 'tool-call-delta',
  index,
  id,
  name,
  argumentsDelta,
});
const end = (index, block) => ({ type: 'block-end', index, block });
const finish = (kind, failure) => ({ type: 'finish', reason: failure ? { kind, failure } : { kind } });
const usage = { type: 'usage', usage: { inputTokens: 3, outputTokens: 2 } };
const ABORTED = { code: 'ABORTED', message: 'aborted' };
const FAILED = { code: 'ACP_PROCESS_EXITED', message: 'the server exited' };

/** A text block at `index`. */
const textBlock = (index, t = 'Hi.') => [start(index, 'text'), text(index, t), end(index, { type: 'text', text: t })];
/** A tool call at `index`, its arguments streamed in two deltas. */
const toolCall = (index, id = 'call-1') => [
  start(index, 'tool-call'),
  args(index, '{"text":', id),
  { type: 'tool-call-delta', index, id, argumentsDelta: '"hi"}' },
  end(index, { type: 'tool-call', id, name: 'echo', arguments: '{"text":"hi"}' }),
];

/** Feed `chunks` to a fresh checker and end it. */
function check(chunks) {
  const checker = streamChecker();
  for (const chunk of chunks) checker.push(chunk);
  checker.end();
}

test('a valid stream of every block type, usage and a tool-calls finish passes (and DSH assembles it)', async () => {
  const chunks = [
    start(0, 'reasoning'),
    thought(0, 'Think'),
    thought(0, 'ing.'),
    end(0, { type: 'reasoning', text: 'Thinking.' }),
    ...textBlock(1),
    ...toolCall(2, 'call-1'),
    ...toolCall(3, 'call-2'),
    usage,
    finish('tool-calls'),
  ];
  check(chunks);
  const out = await drain(chunks);
  assert.deepEqual(out.finish, { kind: 'tool-calls' });
  assert.deepEqual(
    out.toolCalls.map((c) => c.id),
    ['call-1', 'call-2'],
  );
  check([...textBlock(0), finish('stop')]);
  check([finish('max-tokens')]);
});

test('an abort or a failure may cut a round short after its tool calls streamed', () => {
  check([...toolCall(0), finish('aborted', ABORTED)]);
  check([...textBlock(0), ...toolCall(1), finish('error', FAILED)]);
});

// Each case breaks one rule; the pattern is what the checker must say.
const VIOLATIONS = [
  [
    'the first block at index 5',
    [...textBlock(5), finish('stop')],
    /block-start took index 5; the next block index is 0/,
  ],
  ['an index skipped', [...textBlock(0), ...textBlock(2), finish('stop')], /took index 2; the next block index is 1/],
  [
    'an index opened twice',
    [...textBlock(0), ...textBlock(0), finish('stop')],
    /took index 0; the next block index is 1/,
  ],
  [
    'a model block of type tool-result',
    [start(0, 'tool-result'), finish('stop')],
    /a model opened a tool-result block/,
  ],
  ['a model block of type image', [start(0, 'image'), finish('stop')], /a model opened a image block/],
  ['a delta outside any block', [text(0, 'x'), finish('stop')], /text-delta for block 0, which is not open/],
  [
    'a delta after its block ended',
    [...textBlock(0), text(0, 'x'), finish('stop')],
    /text-delta for block 0, which is not open/,
  ],
  [
    'a text delta inside a reasoning block',
    [start(0, 'reasoning'), text(0, 'x'), finish('stop')],
    /a text-delta inside a reasoning block/,
  ],
  [
    'a tool-call delta inside a text block',
    [start(0, 'text'), args(0, '{}'), finish('stop')],
    /a tool-call-delta inside a text block/,
  ],
  [
    'a tool-call delta with an empty id',
    [start(0, 'tool-call'), args(0, '{}', ''), finish('stop')],
    /tool-call-delta 0 has no id/,
  ],
  [
    'a tool call changing its id',
    [start(0, 'tool-call'), args(0, '{', 'a'), args(0, '}', 'b'), finish('stop')],
    /tool call 0 changed its id/,
  ],
  [
    'a block-end for a block never opened',
    [end(0, { type: 'text', text: '' }), finish('stop')],
    /block-end for block 0, which is not open/,
  ],
  [
    'a block-end whose text differs from its deltas',
    [start(0, 'text'), text(0, 'a'), end(0, { type: 'text', text: 'ab' }), finish('stop')],
    /block-end 0 carries .* but its deltas assembled/,
  ],
  [
    'a block-end of another type',
    [start(0, 'text'), text(0, 'a'), end(0, { type: 'reasoning', text: 'a' }), finish('stop')],
    /but its deltas assembled/,
  ],
  [
    'a tool-call block-end whose arguments differ',
    [
      start(0, 'tool-call'),
      args(0, '{}'),
      end(0, { type: 'tool-call', id: 'call-1', name: 'echo', arguments: '{"x":1}' }),
      finish('tool-calls'),
    ],
    /but its deltas assembled/,
  ],
  [
    'tool arguments that are not JSON',
    [
      start(0, 'tool-call'),
      args(0, '{"text":'),
      end(0, { type: 'tool-call', id: 'call-1', name: 'echo', arguments: '{"text":' }),
      finish('tool-calls'),
    ],
    /its arguments are not JSON/,
  ],
  [
    'a tool call ended without its name',
    [
      start(0, 'tool-call'),
      { type: 'tool-call-delta', index: 0, id: 'call-1', argumentsDelta: '{}' },
      end(0, { type: 'tool-call', id: 'call-1', arguments: '{}' }),
      finish('tool-calls'),
    ],
    /ended without its id and name/,
  ],
  [
    'a stop finish with a block open',
    [start(0, 'text'), text(0, 'a'), finish('stop')],
    /the stop finish came while block\(s\) 0 were still open/,
  ],
  [
    'a tool-calls finish with a block open',
    [...toolCall(0), start(1, 'tool-call'), finish('tool-calls')],
    /the tool-calls finish came while block\(s\) 1/,
  ],
  [
    'an error finish with a block open',
    [start(0, 'text'), text(0, 'a'), finish('error', FAILED)],
    /the error finish came while block\(s\) 0/,
  ],
  [
    'a max-tokens finish with a block open',
    [start(0, 'text'), finish('max-tokens')],
    /the max-tokens finish came while block\(s\) 0/,
  ],
  [
    'an aborted finish with a block open',
    [start(0, 'reasoning'), finish('aborted', ABORTED)],
    /the aborted finish came while block\(s\) 0/,
  ],
  [
    'a tool-calls finish with no tool call',
    [...textBlock(0), finish('tool-calls')],
    /a tool-calls finish without any tool call/,
  ],
  [
    'tool calls followed by stop',
    [...toolCall(0), finish('stop')],
    /1 tool call\(s\) streamed but the finish was stop/,
  ],
  [
    'tool calls followed by max-tokens',
    [...toolCall(0), finish('max-tokens')],
    /streamed but the finish was max-tokens/,
  ],
  ['an unknown finish kind', [...textBlock(0), finish('length')], /an unknown finish kind "length"/],
  ['a finish without a reason', [{ type: 'finish' }], /an unknown finish kind undefined/],
  ['an error finish without its failure', [finish('error')], /the error finish has no failure/],
  [
    'an aborted finish whose failure has no code',
    [finish('aborted', { message: 'x' })],
    /the aborted finish has no failure/,
  ],
  ['usage after the finish', [...textBlock(0), finish('stop'), usage], /a chunk after the finish/],
  ['a second finish', [...textBlock(0), finish('stop'), finish('stop')], /a chunk after the finish/],
  ['a block after the finish', [finish('stop'), ...textBlock(0)], /a chunk after the finish/],
  ['an unknown chunk type', [{ type: 'thinking', index: 0 }, finish('stop')], /an unknown chunk type thinking/],
  ['no finish at all', [...textBlock(0), usage], /the stream ended without a finish/],
];

for (const [rule, chunks, message] of VIOLATIONS) {
  test(`the checker refuses ${rule}`, () => {
    assert.throws(() => check(chunks), message);
  });
}
