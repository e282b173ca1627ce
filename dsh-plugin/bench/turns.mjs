/**
 * Whole turns through DSH, each against its Rust twin and DSH's own cost, in the same
 * repetition (`bench/binding-overhead.mjs` runs them):
 * - `dsh_text_turn`: a warm one-chunk text turn;
 * - `dsh_first_tool_stream`: a fresh chat with a tool offered, to the finish that hands DSH
 *   the first call (bridge, `session/new` with the MCP descriptor, the server's
 *   `initialize` and `tools/list`, the permission round, the parked `tools/call`);
 * - `dsh_tool_round`: DSH's result handed to `ctx.llm.stream` until the next call is in
 *   its hands, inside one server turn.
 *
 * Each is timed from `ctx.llm.stream(...)` to the consumer's last chunk, through the packed
 * plugin in DSH's runtime, on a pooled process. Its twin is the same turn driven through
 * the provider inside Rust (`benchDrain`: from the adapter's `stream` to its last batch).
 * DSH's own cost for a turn is a plain JS adapter in the same host replaying the same
 * chunks (`bench/js-floor.mjs`). A row's value is (DSH turn − JS floor) / Rust twin: what
 * the binding and the plugin add to the adapter's own time, as a ratio; the goal is 1.2.
 * @module bench/turns
 */
import { performance } from 'node:perf_hooks';
import { BlockAssembler } from '@deepseek-ai/dsh-llm';
import { ECHO } from '../support/journal.mjs';
import { MODEL, PROVIDER, toolResult } from '../support/requests.mjs';
import { FLOOR_PROVIDER } from './js-floor.mjs';
import { median } from './report.mjs';

/** What each kind of turn's first user message says (the fake's script matches it). */
export const PROMPTS = { text: 'Say your first chunk', firstTool: 'first tool', round: 'tool round' };
/** Turns of each kind per repetition (one alone is too noisy). */
const TURNS = 5;
/** Who wrote the assistant messages of the chats' histories. */
const SOURCE = { kind: 'model', provider: PROVIDER, model: MODEL };

/** The fake's turns for these benchmarks, enough tool rounds for `runs` repetitions. */
export function turnScripts(runs) {
  const call = { call: { tool: 'echo', args: { text: 'x' } } };
  const rounds = (runs + 2) * TURNS + 4;
  return [
    { match: { prompt_contains: PROMPTS.text }, steps: [{ text: 'Hi.' }] },
    { match: { prompt_contains: PROMPTS.firstTool }, steps: [call, { text: 'done' }] },
    {
      match: { prompt_contains: PROMPTS.round },
      steps: [...Array.from({ length: rounds }, () => call), { text: 'done' }],
    },
  ];
}

/** Which captured stream the JS floor replays for a request: by its first message. */
export function replayKey(options) {
  const first = options.messages?.[0]?.content?.find?.((block) => block.type === 'text')?.text ?? '';
  return Object.keys(PROMPTS).find((key) => first.includes(PROMPTS[key]));
}

/** DSH's result (its 0.2.x shape) to one of the turns' calls of `ECHO`. */
const echoed = (call) => toolResult('0.2', call.id, 'echoed');

/**
 * The turns' measurements. `host` is DSH's runtime with the plugin and the floor mounted,
 * `drainInRust(request)` runs `benchDrain` on a provider of its own, `request(messages,
 * extra)` and `user(text)` build DSH's requests.
 */
export class DshTurns {
  #host;
  #drainInRust;
  #request;
  #user;
  #chats = 0;
  /** The running tool-round chats: DSH's, the twin's, and the last chunks of each. */
  #dshRound;
  #rustRound;
  /** Chunks captured from the binding's turns, for the floor to replay. */
  captured = {};

  constructor({ host, drainInRust, request, user }) {
    this.#host = host;
    this.#drainInRust = drainInRust;
    this.#request = request;
    this.#user = user;
  }

  /** One stream through ctx.llm: its time and chunks. */
  async #viaDsh(request) {
    const chunks = [];
    const started = performance.now();
    for await (const chunk of this.#host.llm.stream(request)) chunks.push(chunk);
    const ms = performance.now() - started;
    const finish = chunks.at(-1)?.reason?.kind;
    return { ms, chunks, finish };
  }

  async #viaFloor(request) {
    return this.#viaDsh({ ...request, provider: FLOOR_PROVIDER });
  }

  async #viaRust(request) {
    const drained = await this.#drainInRust(request);
    return { ms: drained.elapsedMs, finish: drained.finish, toolCalls: drained.toolCalls };
  }

  #tools(messages) {
    return this.#request(messages, { tools: [ECHO] });
  }

  /** The history after a tool stream: its assistant message and a result per call. */
  #answered(messages, { chunks, toolCalls }) {
    if (chunks !== undefined) {
      const assembler = new BlockAssembler();
      for (const chunk of chunks) assembler.push(chunk);
      const message = assembler.message(SOURCE);
      const calls = message.content.filter((block) => block.type === 'tool-call');
      return [...messages, message, ...calls.map(echoed)];
    }
    const blocks = toolCalls.map((call) => ({
      type: 'tool-call',
      id: call.id,
      name: call.name,
      arguments: call.arguments,
    }));
    return [
      ...messages,
      Object.freeze({ id: `assistant-${this.#chats++}`, role: 'assistant', content: blocks, source: SOURCE }),
      ...toolCalls.map(echoed),
    ];
  }

  static #expect(label, run, kind) {
    if (run.finish !== kind) throw new Error(`${label}: a turn finished ${run.finish}, not ${kind}`);
    return run;
  }

  /** Starts the tool-round chats and captures one of each turn for the floor (untimed). */
  async warmUp() {
    const text = this.#request([this.#user(PROMPTS.text)]);
    this.captured.text = DshTurns.#expect('warm text turn', await this.#viaDsh(text), 'stop').chunks;
    DshTurns.#expect('warm text turn in Rust', await this.#viaRust(text), 'stop');
    const first = await this.#firstTool();
    this.captured.firstTool = first.chunks;
    const dshStart = [this.#user(`${PROMPTS.round} through DSH`)];
    const rustStart = [this.#user(`${PROMPTS.round} in Rust`)];
    const dsh = DshTurns.#expect('first round', await this.#viaDsh(this.#tools(dshStart)), 'tool-calls');
    const rust = DshTurns.#expect('first round in Rust', await this.#viaRust(this.#tools(rustStart)), 'tool-calls');
    this.#dshRound = { messages: dshStart, last: dsh };
    this.#rustRound = { messages: rustStart, last: rust };
    this.captured.round = (await this.#round()).dsh.chunks;
  }

  /** A fresh chat's first tool stream through DSH and in Rust; each chat then runs to its end, untimed. */
  async #firstTool() {
    const n = this.#chats++;
    const dshAsked = [this.#user(`${PROMPTS.firstTool} ${n} through DSH`)];
    const rustAsked = [this.#user(`${PROMPTS.firstTool} ${n} in Rust`)];
    const dsh = DshTurns.#expect('first tool stream', await this.#viaDsh(this.#tools(dshAsked)), 'tool-calls');
    const rust = DshTurns.#expect(
      'first tool stream in Rust',
      await this.#viaRust(this.#tools(rustAsked)),
      'tool-calls',
    );
    DshTurns.#expect(
      'the chat after its first tool',
      await this.#viaDsh(this.#tools(this.#answered(dshAsked, dsh))),
      'stop',
    );
    DshTurns.#expect(
      'the chat after its first tool in Rust',
      await this.#viaRust(this.#tools(this.#answered(rustAsked, rust))),
      'stop',
    );
    return { chunks: dsh.chunks, dsh: dsh.ms, rust: rust.ms, request: this.#tools(dshAsked) };
  }

  /** One tool round of each running chat, DSH's and the twin's. */
  async #round() {
    const step = async (chat, via, label) => {
      chat.messages = this.#answered(chat.messages, chat.last);
      chat.last = DshTurns.#expect(label, await via(this.#tools(chat.messages)), 'tool-calls');
      return chat.last;
    };
    const dsh = await step(this.#dshRound, (r) => this.#viaDsh(r), 'tool round');
    const rust = await step(this.#rustRound, (r) => this.#viaRust(r), 'tool round in Rust');
    return { dsh, rust, request: this.#tools(this.#dshRound.messages) };
  }

  /** One repetition: each kind's median over `TURNS` turns through DSH, in Rust, and through the floor. */
  async repetition() {
    const figures = { text: [[], [], []], firstTool: [[], [], []], round: [[], [], []] };
    const push = (kind, dsh, rust, floor) => {
      figures[kind][0].push(dsh);
      figures[kind][1].push(rust);
      figures[kind][2].push(floor);
    };
    for (let i = 0; i < TURNS; i++) {
      const text = this.#request([this.#user(PROMPTS.text)]);
      const dsh = DshTurns.#expect('text turn', await this.#viaDsh(text), 'stop');
      const rust = DshTurns.#expect('text turn in Rust', await this.#viaRust(text), 'stop');
      const floor = await this.#viaFloor(text);
      push('text', dsh.ms, rust.ms, floor.ms);
    }
    for (let i = 0; i < TURNS; i++) {
      const { dsh, rust, request } = await this.#firstTool();
      const floor = await this.#viaFloor(request);
      push('firstTool', dsh, rust, floor.ms);
    }
    for (let i = 0; i < TURNS; i++) {
      const { dsh, rust, request } = await this.#round();
      const floor = await this.#viaFloor(request);
      push('round', dsh.ms, rust.ms, floor.ms);
    }
    const medians = (kind) => figures[kind].map(median);
    return { text: medians('text'), firstTool: medians('firstTool'), round: medians('round') };
  }
}

/** The three rows from the repetitions' `[dsh, rust, floor]` medians, by kind. */
export function turnRows(reps, row) {
  const kinds = [
    ['dsh_text_turn', 'text', "a warm one-chunk text turn (no tools; the no-tool lane's persistent client)"],
    [
      'dsh_first_tool_stream',
      'firstTool',
      "a fresh chat with one tool offered, to the finish that hands DSH the first call: bridge bound, session/new with the MCP descriptor (the fake's initialize and tools/list to the bridge), the permission round, the first tools/call parked; the chat is then answered and run to its end, untimed",
    ],
    [
      'dsh_tool_round',
      'round',
      "DSH's tool result handed to ctx.llm.stream until the next call is in its hands, inside one server turn (the fake's MCP client opens a connection per request)",
    ],
  ];
  return kinds.map(([id, kind, what]) => {
    const excess = reps.map((rep) => rep[kind][0] - rep[kind][2]);
    return row({
      id,
      title: `${what.split(',')[0].split('(')[0].trim()} through DSH minus DSH's own cost, vs the same turn in Rust`,
      measures: `${what}; from ctx.llm.stream(...) to the consumer's last chunk through the packed plugin in DSH's runtime on a pooled process, minus the same chunks replayed by a plain JS adapter through ctx.llm.stream (DSH's own cost), against the same turn driven through the provider inside Rust (benchDrain, from stream() to its last batch); each repetition takes the median of ${TURNS} turns of each`,
      figure: { what: 'DSH turn − JS floor', unit: 'ms', samples: excess },
      floor: { what: 'the Rust twin (benchDrain)', unit: 'ms', samples: reps.map((rep) => rep[kind][1]) },
      kind: 'ratio',
      goal: { op: '<=', value: 1.2 },
    });
  });
}
