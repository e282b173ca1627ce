// The real-loop host of `dsh-sim run --real-loop`: one scenario's chat through DSH's own
// agent loop (@deepseek-ai/dsh-agent-loop with LlmRuntime, SessionStore, SystemPrompt,
// ToolRuntime and AgentRegistry on a Cordis Context), with this package's plugin mounted
// against the server dsh-sim prepared. dsh-sim stays the judge: it writes the spec
// (argv[2]), drives the chat one user message at a time over stdin, runs its checks
// between messages, and reads back the record this file writes (the streams DSH's loop
// consumed, as the `llm/stream` waterfall saw them; how each turn ended; the tool
// executions). See ../../scenarios/README.md ("Two hosts") for the protocol and what it cannot express.
//
// Protocol: dsh-sim writes one JSON command per line on stdin: {"cmd":"run","index":N}
// (run chat entry N), {"cmd":"finish"} (the queries after the chat, dispose, write the
// record) or {"cmd":"cancel"} (the time bound passed: cancel every agent, dispose, write
// the record). The driver answers on stdout with lines starting `@@dsh-loop ` followed
// by JSON ({"event":"ready"}, {"event":"ran","index":N}, {"event":"done"}); every other
// stdout line is ignored by dsh-sim.

// DSH's loop needs Node 22 (`Promise.withResolvers`); on Node 20 it fails at start.
if (typeof Promise.withResolvers !== 'function') {
  Promise.withResolvers = function withResolvers() {
    let resolve;
    let reject;
    const promise = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

import { readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Context } from '@deepseek-ai/cordis';
import { LlmRuntime, createUserMessage } from '@deepseek-ai/dsh-llm';
import { SessionStore } from '@deepseek-ai/dsh-session';
import { SystemPrompt } from '@deepseek-ai/dsh-system-prompt';
import { ToolRuntime } from '@deepseek-ai/dsh-tools';
import { AgentRegistry } from '@deepseek-ai/dsh-agent';
import { AgentLoop } from '@deepseek-ai/dsh-agent-loop';
import { ApprovalService } from '@deepseek-ai/dsh-user-approval';
import plugin from '../index.js';
import { hostDshLlm, LLM_VARIABLE } from '../support/dsh-host.mjs';
import { hostTool, MAX_SUBAGENT_DEPTH } from './tools.mjs';

// The DSH this run was meant to be on (ci/real-loop.sh names it): a swap that did not
// happen must not pass as a run on that DSH.
const meant = process.env[LLM_VARIABLE];
if (meant && hostDshLlm().version !== meant) {
  throw new Error(`dsh-llm ${hostDshLlm().version} resolved, not ${meant} (${hostDshLlm().dir})`);
}

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const say = (event) => process.stdout.write(`@@dsh-loop ${JSON.stringify(event)}\n`);
const message = (error) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

/** What dsh-sim reads back: see `runner/real_loop/record.rs`. */
const record = { runs: [], executions: {}, hostErrors: [], modelsListed: null, contextWindow: null };

const ctx = new Context();
ctx.plugin(LlmRuntime);
ctx.plugin(SessionStore);
ctx.plugin(SystemPrompt, { persona: spec.system, includeHarnessIdentity: false });
ctx.plugin(ToolRuntime);
ctx.plugin(AgentRegistry);
ctx.plugin(AgentLoop, { agents: [] });
ctx.plugin(ApprovalService, { policy: 'ask' });
await ctx.start?.();

/** The chats' agents by session id: depth, the run recording it, the abort point. */
const agents = new Map();
const handles = [];
let chatCount = 0;
let current;

// Every stream DSH's loop consumes, as the `llm/stream` waterfall hands it on: the
// request (minus its signal) and each chunk, for the chat's own requests (a subagent's
// and a title request's streams are not the chat's generations, as in dsh-sim).
ctx.on('llm/stream', (options, next) => {
  const owner = options.purpose === undefined ? agents.get(options.sessionId) : undefined;
  if (owner === undefined || owner.depth !== 0 || owner.run === undefined) return next();
  const { signal: _signal, ...request } = options;
  const generation = { request: JSON.parse(JSON.stringify(request)), parts: [] };
  owner.run.generations.push(generation);
  return (async function* recorded() {
    for await (const chunk of next()) {
      yield chunk;
      // DSH's loop asked for the next chunk, so it took this one (it checks its turn
      // signal before it takes each chunk: the one after an abort is never taken).
      generation.parts.push(JSON.parse(JSON.stringify(chunk)));
      const delta = chunk.type === 'text-delta' || chunk.type === 'reasoning-delta' || chunk.type === 'tool-call-delta';
      if (delta && owner.abort === 'on_first_delta') {
        owner.abort = undefined;
        owner.run.abortedByUser = true;
        owner.agent.cancel({ kind: 'user' });
      }
    }
  })();
});

// How each turn ended, and each agent's last assistant text (a subagent's answer).
ctx.on('session/event', (session, event) => {
  const owner = agents.get(session.id);
  if (owner === undefined) return;
  if (event.type === 'turn/end') {
    owner.turnEnd = JSON.parse(JSON.stringify(event.data.reason));
    if (owner.run !== undefined) owner.run.turnEnd = owner.turnEnd;
  }
  if (event.type === 'assistant/message') {
    const { content } = event.data.message;
    owner.lastText = content
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join('');
    // The user presses stop while DSH holds the generation's tool calls, before it runs any.
    if (owner.abort === 'on_tool_calls' && content.some((b) => b.type === 'tool-call') && owner.run !== undefined) {
      owner.abort = undefined;
      owner.run.abortedOnToolCalls = true;
      owner.agent.cancel({ kind: 'user' });
    }
  }
});
ctx.on('agent/error', (payload) => {
  const owner = agents.get(payload.agent.id);
  if (owner?.run !== undefined) owner.run.errors.push(message(payload.error));
});

// DSH's permission policy: the scenario's allow, deny or ask, per tool; an ask goes to
// DSH's approval service, whose answerer here is the scenario's scripted user.
const permissions = new Map(spec.tools.map((tool) => [tool.name, tool.permission]));
ctx.on('tools/pre-execute', async (exec, next) => {
  const permission = permissions.get(exec.name);
  if (permission === 'deny') return { kind: 'deny', reason: 'permission denied by DSH' };
  if (permission === 'ask_approved' || permission === 'ask_rejected')
    return { kind: 'ask', reason: 'the scenario asks the user' };
  return next();
});
ctx.on('approval/request', async (request, next) => {
  const permission = permissions.get(request.toolName);
  if (permission === 'ask_approved') return 'allowed-once';
  if (permission === 'ask_rejected') return 'rejected';
  return next();
});

const fiber = ctx.plugin(plugin, spec.plugin);
try {
  await fiber.await?.();
} catch (error) {
  record.hostErrors.push(`DSH refused the adapter's registration: ${message(error)}`);
}
const provider = spec.plugin.provider ?? 'antigravity-acp';
for (let i = 0; i < 500 && !ctx.llm.listProviders().some((p) => p.id === provider); i += 1) {
  await new Promise((resolve) => setTimeout(resolve, 10));
}
const registered = ctx.llm.listProviders().some((p) => p.id === provider);
if (!registered && record.hostErrors.length === 0) {
  record.hostErrors.push(`DSH refused the adapter's registration: provider ${provider} never registered`);
}

/** Creates an agent (a chat, or a subagent at `depth`) and tracks it. */
async function createAgent(sessionId, depth, denyTools) {
  const handle = await ctx.agents.create({
    sessionId,
    meta: { cwd: spec.cwd },
    agentOptions: {
      provider: spec.model.provider,
      model: spec.model.model,
      ...(spec.maxTokens ? { maxTokens: spec.maxTokens } : {}),
    },
    setup: denyTools.length > 0 ? (agentCtx) => void agentCtx.tools.restrict({ deny: denyTools }) : undefined,
  });
  handles.push(handle);
  const owner = { agent: handle.agent, depth, run: undefined, abort: undefined, turnEnd: undefined, lastText: '' };
  agents.set(sessionId, owner);
  return owner;
}

/** Sends `text` to `owner` and waits until its turn is over. */
async function runTurn(owner, text) {
  owner.turnEnd = undefined;
  owner.agent.followup(createUserMessage({ content: [{ type: 'text', text }], source: { kind: 'user' } }));
  await owner.agent.whenIdle();
}

const subagent = {
  /** A nested chat through DSH's agent registry; its final answer, or why it failed. */
  async run(parentId, task) {
    const parent = agents.get(parentId);
    const depth = (parent?.depth ?? 0) + 1;
    const deny =
      depth >= MAX_SUBAGENT_DEPTH
        ? spec.tools.filter((t) => t.behaviour.subagent !== undefined).map((t) => t.name)
        : [];
    const owner = await createAgent(`${parentId}-sub-${handles.length}`, depth, deny);
    await runTurn(owner, task);
    if (owner.turnEnd?.kind === 'completed') return { text: owner.lastText, failed: false };
    return { text: `the subagent did not finish: ${JSON.stringify(owner.turnEnd ?? null)}`, failed: true };
  },
};

const toolEnv = { ctx, spec, record, subagent };
const disposers = new Map();
const registerTools = () => {
  for (const tool of spec.tools) {
    if (disposers.has(tool.name)) continue;
    try {
      disposers.set(tool.name, ctx.tools.register(hostTool(tool, toolEnv)));
    } catch (error) {
      record.hostErrors.push(`DSH refused the tool ${tool.name}: ${message(error)}`);
    }
  }
};
registerTools();

async function run(index) {
  const entry = spec.chat[index];
  if (current === undefined || entry.newChat) {
    chatCount += 1;
    // A new chat offers every tool, none (`without_tools`) or only those `offer_tools` names.
    const offered = entry.withoutTools ? [] : (entry.offerTools ?? spec.tools.map((t) => t.name));
    const denied = spec.tools.map((t) => t.name).filter((name) => !offered.includes(name));
    current = await createAgent(`dsh-loop-${process.pid}-chat-${chatCount}`, 0, denied);
  }
  const runRecord = {
    user: entry.user,
    generations: [],
    turnEnd: null,
    errors: [],
    abortedOnToolCalls: false,
    abortedByUser: false,
  };
  record.runs.push(runRecord);
  current.run = runRecord;
  current.abort = entry.abort ?? undefined;
  await runTurn(current, entry.user);
}

async function finish(cancelled) {
  if (!cancelled && registered) {
    if (spec.queries.modelsListed) {
      try {
        const models = await ctx.llm.listModels(provider);
        record.modelsListed = models.map((m) => `${m.provider ?? provider}/${m.id}`);
      } catch (error) {
        record.hostErrors.push(`listModels failed: ${message(error)}`);
      }
    }
    if (spec.queries.contextWindow) {
      try {
        const info = await ctx.llm.resolveModelInfo(spec.model.provider, spec.model.model);
        record.contextWindow = info?.context?.contextWindow ?? null;
      } catch (error) {
        record.hostErrors.push(`resolveModel failed: ${message(error)}`);
      }
    }
  }
  if (cancelled) for (const owner of agents.values()) owner.agent.cancel({ kind: 'user' });
  for (const handle of handles.reverse()) await handle.dispose().catch(() => {});
  await fiber.dispose();
  await ctx.root?.dispose?.();
  writeFileSync(spec.record, JSON.stringify(record));
  say({ event: 'done' });
  process.exit(0);
}

if (spec.queries.listModelsFirst && registered) {
  try {
    await ctx.llm.listModels(provider);
  } catch (error) {
    record.hostErrors.push(`listModels failed: ${message(error)}`);
  }
}
say({ event: 'ready' });
const commands = createInterface({ input: process.stdin });
for await (const line of commands) {
  const command = JSON.parse(line);
  if (command.cmd === 'run') {
    if (registered) {
      try {
        await run(command.index);
      } catch (error) {
        record.hostErrors.push(
          `the run for ${JSON.stringify(spec.chat[command.index]?.user)} threw: ${message(error)}`,
        );
      }
    }
    say({ event: 'ran', index: command.index });
  } else if (command.cmd === 'finish' || command.cmd === 'cancel') {
    await finish(command.cmd === 'cancel');
  }
}
await finish(true);
