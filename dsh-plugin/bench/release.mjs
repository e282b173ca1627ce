/**
 * The release builds the benchmarks run: the fake, and an addon of the benchmarks' own with
 * the `bench` feature (`benchDrain`), copied aside (the package's own copy is a build
 * without it). Sets `ANTIGRAVITY_ACP_DSH_ADDON` and `FAKE_ANTIGRAVITY` for the plugin and
 * the fake's helpers.
 * @module bench/release
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Builds both (cargo's incremental build: quick when nothing changed). */
export function releaseBuilds() {
  execFileSync('cargo', ['build', '--locked', '--release', '-p', 'fake-antigravity'], {
    cwd: pkg,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const addon = join(pkg, 'bench', '.addon', 'antigravity-acp-dsh.release-bench.node');
  execFileSync(process.execPath, [join(pkg, 'scripts', 'build.mjs'), '--release', '--bench', '--out', addon], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  process.env.ANTIGRAVITY_ACP_DSH_ADDON = addon;
  const target = process.env.CARGO_TARGET_DIR ?? join(pkg, '..', 'target');
  process.env.FAKE_ANTIGRAVITY ??= join(target, 'release', 'fake-antigravity');
  if (!existsSync(process.env.FAKE_ANTIGRAVITY)) throw new Error(`no release fake at ${process.env.FAKE_ANTIGRAVITY}`);
}
