// Lifecycle through DSH's runtime: DSH's abort signal (mid-stream and already aborted), an
// early return, the plugin scope's disposal mid-turn, a refused sampling control, a refused
// config, and Rust panics (synchronous, async, a turn task's).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Context } from '@deepseek-ai/cordis';
import { LlmError, LlmRuntime } from '@deepseek-ai/dsh-llm';
import plugin, { AntigravityAcpAdapter } from '../index.js';
import { binding as loadBinding } from '../lib/binding.js';
import { settle } from '../lib/failure.js';
import { drain } from '../support/checker.mjs';
import { fakeServer } from '../support/fake.mjs';
import { fakeHost } from '../support/host.mjs';
import { configJson } from '../lib/config.js';
import { request, user } from '../support/requests.mjs';
import { eventually, within } from '../support/wait.mjs';

const binding = loadBinding();

const LONG = {
  match: { prompt_contains: 'long essay' },
  steps: [{ text: 'Essay, part one.' }, { wait_for_cancel: { timeout_ms: 10000 } }],
};

test('aborting DSH signal mid-stream ends it aborted (ABORTED), sends session/cancel, and the turn keeps no process', async (t) => {
  // The default pool (maxIdleProcesses unset): a cancelled turn's process that went back
  // to the pool or the no-tool lane instead of being disposed would stay, and fail below.
  const { fake, host } = await fakeHost(t, { turns: [LONG] });
  try {
    const controller = new AbortController();
    const out = await within(
      drain(host.llm.stream(request([user('Write a long essay')], { signal: controller.signal })), {
        onChunk: (chunk) => chunk.type === 'text-delta' && controller.abort(),
      }),
      'the aborted stream',
    );
    assert.equal(out.finish.kind, 'aborted');
    assert.equal(out.finish.failure.code, 'ABORTED');
    assert.ok(fake.methods().includes('session/cancel'), 'session/cancel reached the server');
    const prompt = fake.frames('out').find((f) => f.result?.stopReason !== undefined);
    assert.equal(prompt?.result.stopReason, 'cancelled', 'the server answered the prompt cancelled');
    // Before the plugin scope is disposed (which would end every process anyway).
    await eventually(
      () => fake.pids().length === 0 && fake.scratchLeft().length === 0,
      'no fake process and no scratch directory after the abort, with the plugin still mounted',
    );
    assert.ok(
      fake
        .journal()
        .flat()
        .some((e) => e.kind === 'exited' && e.reason === 'stdin closed'),
      'the connection was closed, not only the process killed',
    );
  } finally {
    await host.stop();
  }
});

test('returning early from the stream (break) closes the Rust stream, the server turn is cancelled, and it keeps no process', async (t) => {
  const fake = fakeServer({ turns: [LONG] });
  t.after(() => fake.remove());
  // The adapter registered by hand (default pool), so the test holds every native handle: only close()
  // (not the garbage collector finalizing a dropped handle) can end the Rust stream.
  const handles = [];
  const adapter = new AntigravityAcpAdapter(
    configJson({ server: fake.server, scratchRoot: fake.scratchRoot, ...fake.allow }),
    undefined,
    {
      onStream: (handle) => handles.push(handle),
    },
  );
  const ctx = new Context();
  ctx.plugin(LlmRuntime);
  await eventually(() => ctx.get('llm') !== undefined, 'the llm service');
  ctx.llm.registerAdapter(['antigravity-acp'], adapter);
  try {
    for await (const chunk of ctx.llm.stream(request([user('Write a long essay')]))) {
      if (chunk.type === 'text-delta') break;
    }
    await eventually(() => fake.methods().includes('session/cancel'), 'session/cancel after the early return');
    assert.equal(handles.length, 1);
    assert.equal(await handles[0].nextBatch(8), '{"ok":[]}', 'the closed handle yields nothing more');
    // Before the adapter is disposed (which would end every process anyway).
    await eventually(
      () => fake.pids().length === 0 && fake.scratchLeft().length === 0,
      'no fake process and no scratch directory after the early return, with the adapter still registered',
    );
  } finally {
    await adapter.dispose();
  }
});

test('a request whose signal is already aborted ends aborted with code ABORTED (not UNKNOWN), starting no process', async (t) => {
  const { fake, host } = await fakeHost(t, { turns: [LONG] });
  try {
    const out = await drain(host.llm.stream(request([user('Write a long essay')], { signal: AbortSignal.abort() })));
    assert.equal(out.finish.kind, 'aborted');
    assert.equal(out.finish.failure.code, 'ABORTED');
    assert.deepEqual(out.blocks, []);
    await assert.rejects(
      host.llm.resolveModelInfo('antigravity-acp', 'server-default', AbortSignal.abort()),
      (error) => error instanceof LlmError && error.code === 'ABORTED',
    );
    assert.deepEqual(fake.journal(), [], 'no server process was started');
  } finally {
    await host.stop();
  }
});

test('disposing the plugin scope mid-turn ends the stream and leaves no process and no scratch directory', async (t) => {
  const { fake, host } = await fakeHost(t, { turns: [LONG] });
  let disposed;
  const out = await within(
    drain(host.llm.stream(request([user('Write a long essay')])), {
      onChunk: (chunk) => {
        if (chunk.type === 'text-delta') disposed = host.fiber.dispose();
      },
    }),
    'the stream cut by disposal',
  );
  await within(disposed, 'the plugin scope disposal');
  assert.equal(out.finish.kind, 'error');
  assert.equal(out.finish.failure.code, 'ACP_DISPOSED');
  assert.deepEqual(fake.pids(), [], 'no fake process once the disposal settled');
  assert.deepEqual(fake.scratchLeft(), [], 'no scratch directory once the disposal settled');
  assert.ok(fake.methods().includes('session/cancel'));
  await host.stop();
});

test('a refused temperature finishes UNSUPPORTED_OPTION and starts no process', async (t) => {
  const { fake, host } = await fakeHost(t, {});
  try {
    const out = await drain(host.llm.stream(request([user('hi')], { temperature: 0.2 })));
    assert.equal(out.finish.kind, 'error');
    assert.equal(out.finish.failure.code, 'UNSUPPORTED_OPTION');
    assert.match(out.finish.failure.message, /temperature/);
    assert.deepEqual(out.blocks, []);
    assert.deepEqual(fake.journal(), [], 'no server process was started');
  } finally {
    await host.stop();
  }
});

test('a refused config throws LlmError ACP_INVALID_CONFIG naming the field, and registers nothing', async () => {
  assert.throws(
    () => new AntigravityAcpAdapter(JSON.stringify({ timeoutMs: 0 })),
    (error) => error instanceof LlmError && error.code === 'ACP_INVALID_CONFIG' && /timeoutMs/.test(error.message),
  );
  assert.throws(
    () => new AntigravityAcpAdapter(JSON.stringify({ timeoutMS: 5 })),
    (error) => error instanceof LlmError && error.code === 'ACP_INVALID_CONFIG' && /timeoutMS/.test(error.message),
  );
  const ctx = new Context();
  ctx.plugin(LlmRuntime);
  await eventually(() => ctx.get('llm') !== undefined, 'the llm service');
  const fiber = ctx.plugin(plugin, { maxActiveTurns: 0 });
  await fiber.await?.().catch(() => {});
  assert.deepEqual(ctx.llm.listProviders(), []);
  await fiber.dispose();
});

// Every caught panic carries this message, never its payload (Rust's panic messages can
// quote data; the hooks' payloads say "on purpose").
const PANICKED = 'the adapter panicked (an internal fault; the host goes on)';
const noHooks = binding.testPanic === undefined && 'a release addon has no test hooks';

test('a Rust panic is a thrown error with code ACP_INTERNAL and a fixed message, and the host goes on', {
  skip: noHooks,
}, () => {
  assert.throws(
    () => binding.testPanic(),
    (error) => error.code === 'ACP_INTERNAL' && error.message === PANICKED,
  );
  const adapter = new AntigravityAcpAdapter('{}');
  assert.equal(adapter.providerInfo('antigravity-acp').id, 'antigravity-acp');
});

test('a panic inside an async method reaches JS as LlmError ACP_INTERNAL through the envelope, and the host goes on', {
  skip: noHooks,
}, async (t) => {
  const json = await within(binding.testPanicAsync(), 'the async method that panicked');
  assert.throws(
    () => settle(json),
    (error) => error instanceof LlmError && error.code === 'ACP_INTERNAL' && error.message === PANICKED,
  );
  const { host } = await fakeHost(t, {
    turns: [{ match: { prompt_contains: 'say hello' }, steps: [{ text: 'Still here.' }] }],
  });
  try {
    const out = await drain(host.llm.stream(request([user('Please say hello')])));
    assert.deepEqual(out.finish, { kind: 'stop' });
    assert.equal(out.text, 'Still here.');
  } finally {
    await host.stop();
  }
});

test('a stream whose producer died without a finish (a panicked turn task) ends with an ACP_INTERNAL error finish', {
  skip: noHooks,
}, async () => {
  const handle = binding.testUnfinishedStream();
  const batches = [];
  for (;;) {
    const batch = JSON.parse(await handle.nextBatch(8)).ok;
    if (batch.length === 0) break;
    batches.push(batch);
  }
  assert.deepEqual(batches, [
    [{ type: 'text-delta', index: 0, text: 'partial' }],
    [
      {
        type: 'finish',
        reason: {
          kind: 'error',
          failure: {
            code: 'ACP_INTERNAL',
            message: 'the adapter ended this stream without a finish (an internal fault)',
          },
        },
      },
    ],
  ]);
});
