// A scenario's `dsh.tools` as DSH tools (ToolRuntime definitions): the definition the
// model is offered, and an `execute` with the scripted behaviour (an output, a failure,
// a subagent through DSH's agent registry, a title request through DSH's LLM runtime),
// each execution counted. The permission policy is the driver's `tools/pre-execute`.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** How deep subagents nest: a chat at this depth is offered no subagent tools (dsh-sim's `MAX_SUBAGENT_DEPTH`). */
export const MAX_SUBAGENT_DEPTH = 2;

/** The title request's system prompt and output cap (dsh-sim's `side_requests.rs`). */
const TITLE_SYSTEM = 'Write a short title for this conversation.';
const TITLE_MAX_TOKENS = 64;

/** A string output as its text, any other JSON as its JSON text. */
const asText = (value) => (typeof value === 'string' ? value : JSON.stringify(value));

/** Waits `ms`, or rejects when `signal` aborts. */
function delay(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** The longest a held tool waits for the fake's answers (dsh-sim's `HOLD_BOUND`). */
const HOLD_BOUND_MS = 5000;

/** How many answers to its MCP `tools/call` the fake journaled under `dir` (its JSONL files). */
function toolCallAnswers(dir) {
  let answers = 0;
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.jsonl')) continue;
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      if (!line.includes('"mcp_response"')) continue;
      try {
        const entry = JSON.parse(line);
        if (entry.kind === 'mcp_response' && entry.method === 'tools/call') answers += 1;
      } catch {
        // A line still being written.
      }
    }
  }
  return answers;
}

/** Whether the chat's one hold ran (one driver process runs one chat). */
let held = false;

/**
 * A tool's `hold_until_fake_answers` (dsh-sim's `FaultPlan::hold_for_answers`): the chat's
 * first held execution waits until the fake journaled `answers` `tools/call` answers, or
 * `HOLD_BOUND_MS`; later executions go on at once.
 */
async function holdForAnswers(env, answers, signal) {
  if (held) return;
  held = true;
  const started = Date.now();
  while (
    env.spec.journalDir &&
    toolCallAnswers(env.spec.journalDir) < answers &&
    Date.now() - started < HOLD_BOUND_MS
  ) {
    await delay(10, signal);
  }
}

/** A title request shaped as DSH's title plugin shapes it; the title, or why it failed. */
async function titleRequest(env, text, sessionId, signal) {
  const { ctx, spec } = env;
  const stream = ctx.llm.stream({
    provider: spec.model.provider,
    model: spec.model.model,
    messages: [
      { role: 'user', id: `title-${Date.now()}`, content: [{ type: 'text', text }], source: { kind: 'user' } },
    ],
    system: TITLE_SYSTEM,
    maxTokens: TITLE_MAX_TOKENS,
    purpose: 'session-title',
    sessionId,
    signal,
  });
  let title = '';
  for await (const chunk of stream) {
    if (chunk.type === 'text-delta') title += chunk.text;
    if (chunk.type === 'finish') {
      const failure = chunk.reason?.failure;
      if (failure) throw new Error(`the title request failed: ${failure.code}`);
      return title;
    }
  }
  throw new Error('the title stream ended without a finish');
}

/**
 * The DSH tool for one entry of the spec's `tools`.
 * @param {{name: string, description: string, parameters: object, behaviour: object, delayMs: number}} tool
 * @param {{ctx: any, spec: any, record: any, subagent: {run(parentId: string, task: string): Promise<{text: string, failed: boolean}>}}} env
 */
export function hostTool(tool, env) {
  const { behaviour } = tool;
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    output: { schema: {}, render: (_args, value) => [{ type: 'text', text: asText(value) }] },
    async execute(_args, exec) {
      env.record.executions[tool.name] = (env.record.executions[tool.name] ?? 0) + 1;
      if (tool.holdUntilFakeAnswers) await holdForAnswers(env, tool.holdUntilFakeAnswers, exec.signal);
      if (tool.delayMs > 0) await delay(tool.delayMs, exec.signal);
      if (behaviour.fails !== undefined) throw new Error(behaviour.fails);
      if (behaviour.subagent !== undefined) {
        const answer = await env.subagent.run(exec.agent?.id, behaviour.subagent);
        if (answer.failed) throw new Error(answer.text);
        return answer.text;
      }
      if (behaviour.titleRequest !== undefined) {
        return titleRequest(env, behaviour.titleRequest, exec.agent?.id, exec.signal);
      }
      return behaviour.output ?? 'ok';
    },
  };
}
