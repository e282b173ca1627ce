/**
 * The wait a DSH user feels at each message of a chat, through DSH's runtime with the
 * packed plugin (`npm --prefix dsh-plugin run bench:chat`): from `ctx.llm.stream(...)` to
 * the first text delta, on the release fake with 1.3.0's recorded set-up latencies divided
 * by `--scale` (10: `initialize` 850 ms, `session/new` 480 ms, the model's selection
 * 280 ms, the prompt 100 ms), with a person's pause between messages. The floor is the
 * fake's own prompt latency, the part no adapter can hide; the rest is the session's
 * set-up, which a session prepared while the user reads takes off the path (B09). The
 * same chats as `dsh-sim bench`'s `chat_wait` rows, each on a host of its own (its first
 * message starts the process):
 * - `dsh_chat_wait`: text messages, one tool and a model the session must select, the
 *   same every message, after `--pause-ms`;
 * - `dsh_chat_wait_tool_round`: the same with a tool round in every message;
 * - `dsh_chat_wait_first`: that chat's first message;
 * - `dsh_chat_wait_short_pause` and `dsh_chat_wait_no_pause`;
 * - `dsh_chat_wait_tools_changed` and `dsh_chat_wait_model_changed`: message 3 of a chat
 *   whose catalogue grows there, and its message 4, whose model changes.
 *
 *   node bench/chat-wait.mjs [--runs 5] [--messages 5] [--scale 10] [--pause-ms 1500]
 *                            [--short-pause-ms 200] [--json FILE]
 * @module bench/chat-wait
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as pause } from 'node:timers/promises';
import { BlockAssembler } from '@deepseek-ai/dsh-llm';
import { releaseBuilds } from './release.mjs';
import { document, median, printRows, row } from './report.mjs';

const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1];
};
const wholeArg = (name, fallback, least) => {
  const value = Number(arg(name, fallback));
  if (!Number.isInteger(value) || value < least) throw new Error(`${name} wants a whole number of at least ${least}`);
  return value;
};
const RUNS = wholeArg('--runs', 5, 1);
const MESSAGES = wholeArg('--messages', 5, 2);
const SCALE = wholeArg('--scale', 10, 1);
const PAUSE_MS = wholeArg('--pause-ms', 1500, 0);
const SHORT_PAUSE_MS = wholeArg('--short-pause-ms', 200, 0);
const jsonOut = arg('--json', undefined);

/** 1.3.0's recorded latencies, in ms (docs/antigravity-1.3.0.md §2), and the prompt's own. */
const LATENCY = { initialize: 8500, session_new: 4800, set_config_option: 2800, prompt: 1000 };
/** The model the chats name (not the fake's default: a session must select it), and the one message 4 of the changing chat switches to. */
const MODEL = 'gemini-3.8-flash-low';
const OTHER_MODEL = 'gemini-3.7-flash-low';
const PROMPT_MS = LATENCY.prompt / SCALE;

releaseBuilds();
const { default: plugin } = await import('../index.js');
const { fakeServer } = await import('../support/fake.mjs');
const { startHost } = await import('../support/host.mjs');
const { ECHO } = await import('../support/journal.mjs');
const { PROVIDER, request, toolResult, user } = await import('../support/requests.mjs');

const SECOND_TOOL = {
  name: 'echo_twice',
  description: 'Echoes its text twice.',
  parameters: ECHO.parameters,
};

const fake = fakeServer({
  latency_ms: Object.fromEntries(Object.entries(LATENCY).map(([method, ms]) => [method, Math.floor(ms / SCALE)])),
  turns: [
    {
      match: { prompt_contains: 'with a tool round' },
      steps: [{ text: 'checking' }, { call: { tool: 'echo', args: { text: 'x' } } }, { text: 'done' }],
    },
    { steps: [{ text: 'ok' }] },
  ],
});
const config = { server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow };

/** DSH's assistant message for a generation's chunks. */
function assistantOf(chunks, model) {
  const assembler = new BlockAssembler();
  for (const chunk of chunks) assembler.push(chunk);
  return assembler.message({ kind: 'model', provider: PROVIDER, model });
}

/** One stream: ms to its first text delta, its chunks, its finish. */
async function streamed(host, options) {
  const started = performance.now();
  let firstText;
  const chunks = [];
  for await (const chunk of host.llm.stream(options)) {
    if (firstText === undefined && chunk.type === 'text-delta') firstText = performance.now() - started;
    chunks.push(chunk);
  }
  return { firstText, chunks, finish: chunks.at(-1)?.reason?.kind };
}

/**
 * One chat on a host of its own: each message's wait to its first text delta, in ms.
 * @param {{toolRound?: boolean, pauseMs: number, changing?: boolean}} shape
 */
async function chat({ toolRound = false, pauseMs, changing = false }) {
  const host = await startHost(plugin, config);
  try {
    const count = changing ? Math.max(MESSAGES, 4) : MESSAGES;
    let messages = [];
    const waits = [];
    for (let n = 1; n <= count; n++) {
      // A person reading the answer and typing the next message.
      if (n > 1) await pause(pauseMs);
      const tools = changing && n >= 3 ? [ECHO, SECOND_TOOL] : [ECHO];
      const model = changing && n >= 4 ? OTHER_MODEL : MODEL;
      messages = [...messages, user(`message ${n}${toolRound ? ' with a tool round' : ''}`)];
      const first = await streamed(host, request(messages, { model, tools }));
      if (first.firstText === undefined) throw new Error(`message ${n} streamed no text (${first.finish})`);
      waits.push(first.firstText);
      let last = first;
      if (toolRound) {
        if (first.finish !== 'tool-calls') throw new Error(`message ${n} finished ${first.finish}, not tool-calls`);
        const asked = assistantOf(first.chunks, model);
        const calls = asked.content.filter((block) => block.type === 'tool-call');
        messages = [...messages, asked, ...calls.map((call) => toolResult('0.2', call.id, 'echoed'))];
        last = await streamed(host, request(messages, { model, tools }));
      }
      if (last.finish !== 'stop') throw new Error(`message ${n} finished ${last.finish}, not stop`);
      messages = [...messages, assistantOf(last.chunks, model)];
    }
    return waits;
  } finally {
    await host.stop();
  }
}

/** One repetition: the five chats. */
async function repetition() {
  const later = (waits) => median(waits.slice(1));
  const steady = await chat({ pauseMs: PAUSE_MS });
  const toolRound = await chat({ toolRound: true, pauseMs: PAUSE_MS });
  const short = await chat({ pauseMs: SHORT_PAUSE_MS });
  const none = await chat({ pauseMs: 0 });
  const changing = await chat({ pauseMs: PAUSE_MS, changing: true });
  return {
    first: steady[0],
    steady: later(steady),
    toolRound: later(toolRound),
    short: later(short),
    none: later(none),
    toolsChanged: changing[2],
    modelChanged: changing[3],
  };
}

function rows(reps) {
  const floor = {
    what: `the fake's prompt latency (1.3.0's ${LATENCY.prompt} ms / ${SCALE})`,
    unit: 'ms',
    samples: reps.map(() => PROMPT_MS),
  };
  const later = `messages 2–${MESSAGES}, median`;
  const setting = `on the release fake with 1.3.0's set-up latencies / ${SCALE} (initialize ${LATENCY.initialize / SCALE}, session/new ${LATENCY.session_new / SCALE}, session/set_config_option ${LATENCY.set_config_option / SCALE}, prompt ${PROMPT_MS} ms), from ctx.llm.stream(...) through the packed plugin in DSH's runtime to the first text delta`;
  const make = (id, title, measures, key, what, goal = null) =>
    row({
      id,
      title,
      measures: `${measures}, ${setting}`,
      figure: { what, unit: 'ms', samples: reps.map((rep) => rep[key]) },
      floor,
      kind: 'ratio',
      goal,
    });
  return [
    make(
      'dsh_chat_wait',
      "a DSH chat on a server as slow as 1.3.0: the wait per message, after a person's pause",
      `a chat of ${MESSAGES} text messages, one tool and a model the session must select (${MODEL}), the same every message, ${PAUSE_MS} ms between messages`,
      'steady',
      later,
      { op: '<=', value: 1.2 },
    ),
    make(
      'dsh_chat_wait_tool_round',
      'the same chat with a tool round in every message',
      "the same chat, each message's first generation streaming text, then a tool call DSH answers, then text; the wait to the first generation's first text delta",
      'toolRound',
      later,
      { op: '<=', value: 1.2 },
    ),
    make(
      'dsh_chat_wait_first',
      "the same chat's first message (it starts the process)",
      'message 1 of the steady chat: spawn, initialize, the bridge, session/new, the model selected, the prompt',
      'first',
      'message 1',
    ),
    make(
      'dsh_chat_wait_short_pause',
      'the same chat after a short pause',
      `the steady chat with ${SHORT_PAUSE_MS} ms between messages, shorter than the set-up`,
      'short',
      later,
    ),
    make(
      'dsh_chat_wait_no_pause',
      'the same chat with no pause',
      'the steady chat, each message sent as soon as the last one finished',
      'none',
      later,
    ),
    make(
      'dsh_chat_wait_tools_changed',
      'a message whose tool catalogue changed',
      `message 3 of a chat (${PAUSE_MS} ms pauses) whose catalogue grows from one tool to two there`,
      'toolsChanged',
      'message 3',
    ),
    make(
      'dsh_chat_wait_model_changed',
      'a message whose model changed',
      `message 4 of the same chat, whose model changes there to ${OTHER_MODEL}`,
      'modelChanged',
      'message 4',
    ),
  ];
}

try {
  const reps = [];
  for (let i = 0; i < RUNS; i++) {
    console.error(`chat-wait: repetition ${i + 1} of ${RUNS}`);
    reps.push(await repetition());
  }
  const result = document({ tool: 'dsh-plugin bench:chat', repetitions: RUNS, rows: rows(reps) });
  console.log(
    `chat-wait benchmark: ${MESSAGES} messages a chat, 1.3.0's latencies / ${SCALE}, ${RUNS} repetitions, median [min, max], ${process.version}`,
  );
  printRows(result.rows);
  if (jsonOut) {
    writeFileSync(jsonOut, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`wrote ${jsonOut}`);
  }
} finally {
  fake.remove();
}
