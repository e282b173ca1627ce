/**
 * `node dsh-plugin/scenarios/run.mjs [dsh-sim run options] SCENARIO...`: the scenarios
 * through DSH's own agent loop, on the Node running this file: `dsh-sim run --real-loop
 * --node <this node> ...` (cargo builds dsh-sim if needed). The plugin's addon must be
 * the debug build with test hooks (`npm --prefix dsh-plugin run build:debug`): its test
 * overrides carry the adapter settings DSH users cannot set.
 * @module scenarios/run
 */
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = ['run', '--locked', '-q', '-p', 'dsh-sim', '--', 'run', '--real-loop', '--node', process.execPath, ...process.argv.slice(2)];
const run = spawnSync('cargo', args, { cwd: repo, stdio: 'inherit' });
process.exit(run.status ?? 1);
