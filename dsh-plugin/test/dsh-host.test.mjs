// Which DSH a run is on: scripts/test.mjs runs the suite once per dsh-llm that
// support/dsh-versions.mjs names a folder for, and a swap that silently did not happen
// would run the same DSH twice. So every run checks the dsh-llm it resolves, and that DSH's
// own packages (the agent loop's runtime included) resolve that same copy: one LlmRuntime
// class in the host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as llm from '@deepseek-ai/dsh-llm';
import { hostDshLlm, LLM_VARIABLE } from '../support/dsh-host.mjs';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));

test('the run resolves the dsh-llm it was meant to (the package pin without the variable)', () => {
  const expected = process.env[LLM_VARIABLE] ?? manifest.devDependencies['@deepseek-ai/dsh-llm'];
  assert.equal(hostDshLlm().version, expected);
  // What 0.1.1 added, present exactly when the version says so.
  const prepares = typeof llm.LlmAdapter.prototype.prepareCall === 'function';
  assert.equal(prepares, expected !== '0.1.0-rc.8', `LlmAdapter.prepareCall on dsh-llm ${expected}`);
});

test("DSH's other packages, importing or requiring it, get the same dsh-llm as the tests", async () => {
  const loop = fileURLToPath(import.meta.resolve('@deepseek-ai/dsh-agent-loop'));
  // require() of an ES module (Node >= 22.12) goes through the same resolution as import.
  const required = createRequire(loop)('@deepseek-ai/dsh-llm');
  assert.equal(required.LlmRuntime, llm.LlmRuntime, 'one LlmRuntime class in the host');
  assert.ok(await import('@deepseek-ai/dsh-agent-loop'), 'the agent loop loads on this dsh-llm');
});
