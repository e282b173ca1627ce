/**
 * Reads a stream the way DSH's agent loop does, through DSH's own `BlockAssembler`, and
 * enforces the `StreamChunk` rules on the way: deltas only inside an open block of their
 * kind, `block-end.block` equal to what its deltas assembled, tool arguments that parse
 * as JSON, usage before the finish, exactly one finish and nothing after it, and (for a
 * `stop` or `tool-calls` finish) no block left open.
 * @module test/helpers/checker
 */
import { deepStrictEqual } from 'node:assert/strict';
import { BlockAssembler } from '@deepseek-ai/dsh-llm';

const DELTA_KIND = { 'text-delta': 'text', 'reasoning-delta': 'reasoning', 'tool-call-delta': 'tool-call' };

/**
 * A chunk-by-chunk rule checker.
 * @returns {{push(chunk: any): void, end(): void, chunks: any[]}}
 */
export function streamChecker() {
  const open = new Map();
  const ended = new Set();
  const chunks = [];
  let finish;
  const fail = (message) => {
    throw new Error(`stream rule broken at chunk ${chunks.length - 1} (${JSON.stringify(chunks.at(-1))}): ${message}`);
  };
  return {
    chunks,
    push(chunk) {
      chunks.push(chunk);
      if (finish !== undefined) fail('a chunk after the finish');
      switch (chunk.type) {
        case 'block-start':
          if (open.has(chunk.index) || ended.has(chunk.index)) fail(`block ${chunk.index} opened twice`);
          open.set(chunk.index, { type: chunk.blockType, text: '', id: undefined, name: undefined, args: '' });
          break;
        case 'text-delta':
        case 'reasoning-delta':
        case 'tool-call-delta': {
          const block = open.get(chunk.index);
          if (!block) fail(`a ${chunk.type} outside an open block`);
          if (block.type !== DELTA_KIND[chunk.type]) fail(`a ${chunk.type} inside a ${block.type} block`);
          if (chunk.type === 'tool-call-delta') {
            if (block.id !== undefined && block.id !== chunk.id) fail('a tool call changed its id');
            block.id = chunk.id;
            block.name = chunk.name ?? block.name;
            block.args += chunk.argumentsDelta;
          } else {
            block.text += chunk.text;
          }
          break;
        }
        case 'block-end': {
          const block = open.get(chunk.index);
          if (!block) fail(`block-end for block ${chunk.index}, which is not open`);
          open.delete(chunk.index);
          ended.add(chunk.index);
          if (block.type === 'tool-call') {
            deepStrictEqual(chunk.block, { type: 'tool-call', id: block.id, name: block.name, arguments: block.args });
            try {
              JSON.parse(block.args);
            } catch {
              fail(`tool arguments are not JSON: ${block.args}`);
            }
          } else {
            deepStrictEqual(chunk.block, { type: block.type, text: block.text });
          }
          break;
        }
        case 'usage':
          break;
        case 'finish':
          finish = chunk;
          if (['stop', 'tool-calls'].includes(chunk.reason.kind) && open.size > 0) {
            fail(`a ${chunk.reason.kind} finish with blocks still open: ${[...open.keys()]}`);
          }
          break;
        default:
          fail(`an unknown chunk type ${chunk.type}`);
      }
    },
    end() {
      if (finish === undefined) throw new Error(`the stream ended without a finish (${chunks.length} chunks)`);
    },
  };
}

/**
 * Drain `stream` through the checker and DSH's `BlockAssembler`.
 * @param {AsyncIterable<any>} stream - what `ctx.llm.stream` returned.
 * @param {{onChunk?(chunk: any, index: number): void | Promise<void>}} [hooks]
 * @returns {Promise<{chunks: any[], finish: any, blocks: any[], text: string, toolCalls: any[], assembler: BlockAssembler}>}
 */
export async function drain(stream, hooks = {}) {
  const checker = streamChecker();
  const assembler = new BlockAssembler();
  for await (const chunk of stream) {
    checker.push(chunk);
    assembler.push(chunk);
    await hooks.onChunk?.(chunk, checker.chunks.length - 1);
  }
  checker.end();
  const blocks = assembler.blocks();
  return {
    chunks: checker.chunks,
    finish: assembler.finish,
    blocks,
    text: blocks.filter((b) => b.type === 'text').map((b) => b.text).join(''),
    toolCalls: blocks.filter((b) => b.type === 'tool-call'),
    assembler,
  };
}

/**
 * DSH's agent loop in miniature: stream, and while the model asks for tools, append its
 * message and one result per call (from `answer`), and stream again.
 * @param {any} llm - `ctx.llm`.
 * @param {(messages: any[]) => any} build - the request for a history.
 * @param {any[]} messages - the history so far (extended in place).
 * @param {(call: any) => any} answer - the tool-result message for a call.
 * @param {number} [maxRounds]
 * @returns {Promise<{rounds: any[], last: any, calls: any[]}>}
 */
export async function agentLoop(llm, build, messages, answer, maxRounds = 6) {
  const rounds = [];
  const calls = [];
  for (let round = 0; round < maxRounds; round++) {
    const out = await drain(llm.stream(build(messages)));
    rounds.push(out);
    if (out.finish.kind !== 'tool-calls') return { rounds, last: out, calls };
    messages.push(out.assembler.message({ kind: 'model', provider: 'antigravity-acp', model: 'server-default' }));
    for (const call of out.toolCalls) {
      calls.push(call);
      messages.push(answer(call));
    }
  }
  throw new Error(`the model still asked for tools after ${maxRounds} rounds`);
}
