/**
 * The `antigravity-acp-dsh` binary (bin/) run as a user runs it: the test's Node, from the
 * package root (where DSH's packages resolve), its stdout and stderr collected.
 * @module support/cli
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, within } from './wait.mjs';

/** The package root, the binary's working folder. */
export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The binary. */
export const BIN = join(root, 'bin', 'antigravity-acp-dsh.js');

/** The environment of a user with no browser, display or SSH session (a test adds them). */
export function userEnv(extra = {}) {
  const env = { ...process.env };
  for (const name of ['DISPLAY', 'WAYLAND_DISPLAY', 'BROWSER', 'SSH_CONNECTION']) delete env[name];
  return { ...env, ...extra };
}

/**
 * Starts the binary.
 * @param {string[]} args
 * @param {{env?: object}} [options]
 * @returns {{stdout: string, stderr: string, child: import('node:child_process').ChildProcess, exit: Promise<number>}}
 */
export function start(args, options = {}) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: root, env: options.env ?? userEnv() });
  /** @type {any} */
  const out = { stdout: '', stderr: '', child };
  child.stdout.on('data', (chunk) => (out.stdout += chunk));
  child.stderr.on('data', (chunk) => (out.stderr += chunk));
  out.exit = new Promise((resolve) => child.on('close', (code) => resolve(code)));
  return out;
}

/**
 * Runs the binary to its end.
 * @param {string[]} args
 * @param {{env?: object, boundMs?: number}} [options]
 * @returns {Promise<{code: number, stdout: string, stderr: string}>}
 */
export async function cli(args, options = {}) {
  const run = start(args, options);
  const code = await within(run.exit, `antigravity-acp-dsh ${args[0]}`, options.boundMs ?? 60_000);
  return { code, stdout: run.stdout, stderr: run.stderr };
}

/** The exit code a list of checks calls for: any fail 1, else any warn 2, else 0. */
export function expectedExit(checks) {
  if (checks.some((c) => c.status === 'fail')) return 1;
  return checks.some((c) => c.status === 'warn') ? 2 : 0;
}

/**
 * Nothing the command started is left: no fake process, nothing in the scratch root.
 * @param {{pids(): number[], scratchLeft(): string[]}} fake - a `fakeServer`.
 */
export async function nothingLeft(fake) {
  await eventually(() => fake.pids().length === 0, 'no fake process left');
  assert.deepEqual(fake.scratchLeft(), [], 'nothing is left in the scratch root');
}
