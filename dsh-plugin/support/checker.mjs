/**
 * Reads a stream the way DSH's agent loop does, through DSH's own `BlockAssembler`, and
 * enforces the `StreamChunk` rules on the way, as the Rust validator does
 * (`dsh-sim/src/host/stream_rules.rs`):
 *
 * - block indexes 0, 1, 2, … in the order the blocks open, each opened once;
 * - a model opens only `text`, `reasoning` and `tool-call` blocks;
 * - a delta only inside an open block of its type; a tool call's id non-empty and fixed;
 * - `block-end` only for an open block, carrying exactly what its deltas assembled; a
 *   tool call ends with its id and name, and arguments that parse as JSON;
 * - a known finish kind (`stop`, `tool-calls`, `max-tokens`, `aborted`, `error`; the last
 *   two carry a failure with a code and a message), with no block open;
 * - tool calls only with a `tool-calls` finish, or an `aborted`/`error` one that cut the
 *   round short (DSH keeps none of them then); `tool-calls` needs at least one call;
 * - usage only before the finish; exactly one finish, and nothing after it.
 * @module support/checker
 */
import { isDeepStrictEqual } from 'node:util';
import { BlockAssembler } from '@deepseek-ai/dsh-llm';

/** The block type each delta belongs in. */
const DELTA_KIND = { 'text-delta': 'text', 'reasoning-delta': 'reasoning', 'tool-call-delta': 'tool-call' };
/** The block types a model may open. */
const MODEL_BLOCKS = new Set(['text', 'reasoning', 'tool-call']);
/** DSH's finish kinds (`FinishReasonMap`). */
const FINISH_KINDS = new Set(['stop', 'tool-calls', 'max-tokens', 'aborted', 'error']);
/** The finishes that carry a failure. */
const FAILED = new Set(['aborted', 'error']);

/**
 * A chunk-by-chunk rule checker: `push` throws, naming the rule and the chunk, at the
 * first chunk that breaks one; `end` throws when the stream had no finish.
 * @returns {{push(chunk: any): void, end(): void, chunks: any[]}}
 */
export function streamChecker() {
  const open = new Map();
  const chunks = [];
  let nextIndex = 0;
  let toolCalls = 0;
  let finish;
  const fail = (message) => {
    throw new Error(`stream rule broken at chunk ${chunks.length - 1} (${JSON.stringify(chunks.at(-1))}): ${message}`);
  };
  const openOf = (chunk) => {
    const block = open.get(chunk.index);
    if (!block) fail(`a ${chunk.type} for block ${chunk.index}, which is not open`);
    if (block.type !== DELTA_KIND[chunk.type]) fail(`a ${chunk.type} inside a ${block.type} block`);
    return block;
  };
  const endBlock = (chunk) => {
    const block = open.get(chunk.index);
    if (!block) fail(`block-end for block ${chunk.index}, which is not open`);
    open.delete(chunk.index);
    let assembled;
    if (block.type === 'tool-call') {
      if (block.id === undefined || block.name === undefined)
        fail(`tool call ${chunk.index} ended without its id and name`);
      try {
        JSON.parse(block.args);
      } catch {
        fail(`tool call ${chunk.index}: its arguments are not JSON: ${block.args}`);
      }
      toolCalls++;
      assembled = { type: 'tool-call', id: block.id, name: block.name, arguments: block.args };
    } else {
      assembled = { type: block.type, text: block.text };
    }
    if (!isDeepStrictEqual(chunk.block, assembled)) {
      fail(
        `block-end ${chunk.index} carries ${JSON.stringify(chunk.block)}, but its deltas assembled ${JSON.stringify(assembled)}`,
      );
    }
  };
  const checkFinish = (reason) => {
    const kind = reason?.kind;
    if (!FINISH_KINDS.has(kind)) fail(`an unknown finish kind ${JSON.stringify(kind)}`);
    if (open.size > 0) fail(`the ${kind} finish came while block(s) ${[...open.keys()]} were still open`);
    if (FAILED.has(kind) && (typeof reason.failure?.code !== 'string' || typeof reason.failure?.message !== 'string')) {
      fail(`the ${kind} finish has no failure {code, message}`);
    }
    if (kind === 'tool-calls' && toolCalls === 0) fail('a tool-calls finish without any tool call');
    // An abort or a failure may cut a round short after its calls streamed; DSH then
    // keeps no tool call, so that is no violation.
    if (toolCalls > 0 && !['tool-calls', ...FAILED].includes(kind))
      fail(`${toolCalls} tool call(s) streamed but the finish was ${kind}`);
  };
  return {
    chunks,
    push(chunk) {
      chunks.push(chunk);
      if (finish !== undefined) fail('a chunk after the finish');
      switch (chunk?.type) {
        case 'block-start':
          if (chunk.index !== nextIndex)
            fail(`block-start took index ${chunk.index}; the next block index is ${nextIndex}`);
          if (!MODEL_BLOCKS.has(chunk.blockType)) fail(`a model opened a ${chunk.blockType} block`);
          nextIndex++;
          open.set(chunk.index, { type: chunk.blockType, text: '', id: undefined, name: undefined, args: '' });
          break;
        case 'text-delta':
        case 'reasoning-delta':
          openOf(chunk).text += chunk.text;
          break;
        case 'tool-call-delta': {
          const block = openOf(chunk);
          if (typeof chunk.id !== 'string' || chunk.id === '') fail(`tool-call-delta ${chunk.index} has no id`);
          if (block.id !== undefined && block.id !== chunk.id) fail(`tool call ${chunk.index} changed its id`);
          block.id = chunk.id;
          block.name = chunk.name ?? block.name;
          block.args += chunk.argumentsDelta;
          break;
        }
        case 'block-end':
          endBlock(chunk);
          break;
        case 'usage':
          break;
        case 'finish':
          finish = chunk;
          checkFinish(chunk.reason);
          break;
        default:
          fail(`an unknown chunk type ${chunk?.type}`);
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
    text: blocks
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join(''),
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
