/**
 * `node dsh-plugin/real-loop/run.mjs [dsh-sim run options] SCENARIO...`: the scenarios
 * through DSH's own agent loop, on the Node running this file: `dsh-sim run --real-loop
 * --node <this node> ...` (cargo builds dsh-sim if needed). The plugin's addon must be
 * the debug build with test hooks (`npm --prefix dsh-plugin run build:debug`): its test
 * overrides carry the adapter settings DSH users cannot set.
 * @module real-loop/run
 */
import { spawnSync } from 'node:child_process';
const args = [
  'run',
  '--locked',
  '-q',
  '-p',
  'dsh-sim',
  '--',
  'run',
  '--real-loop',
  '--node',
  process.execPath,
  ...process.argv.slice(2),
];
// cargo finds the workspace from any folder of the checkout; paths stay the caller's.
const run = spawnSync('cargo', args, { stdio: 'inherit' });
process.exit(run.status ?? 1);
