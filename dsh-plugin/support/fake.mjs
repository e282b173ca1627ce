/**
 * The real `fake-antigravity` binary (built by cargo) as the plugin's server: a script
 * and a journal in a fresh temp folder per test, the processes it started found by that
 * folder's path (never by a broad name), and its journal read back as JSONL.
 * @module support/fake
 */
import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');

/**
 * Where the fake binary is: `$FAKE_ANTIGRAVITY`, else `$CARGO_TARGET_DIR` or the
 * workspace's `target/`, debug build first.
 * @returns {string} its absolute path.
 */
export function fakeBinary() {
  if (process.env.FAKE_ANTIGRAVITY) return process.env.FAKE_ANTIGRAVITY;
  const targets = [process.env.CARGO_TARGET_DIR, join(repo, 'target')].filter(Boolean);
  for (const target of targets) {
    for (const profile of ['debug', 'release']) {
      const candidate = join(target, profile, 'fake-antigravity');
      if (existsSync(candidate)) return candidate;
    }
  }
  throw new Error(`fake-antigravity not built (looked in ${targets.join(', ')}): cargo build -p fake-antigravity`);
}

/**
 * One fake server setup: its script written, its journal and scratch folders made.
 * @param {object} script - the fake's script (its JSON form).
 * @returns {{dir: string, scriptPath: string, journalDir: string, scratchRoot: string, server: {command: string, args: string[]},
 *   allow: {allowRead: string[], allowWrite: string[]},
 *   journal(): any[][], frames(direction?: 'in' | 'out'): any[], methods(): string[], pids(): number[],
 *   scratchLeft(): string[], remove(): void}}
 */
export function fakeServer(script = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'agy-dsh-test-'));
  const scriptPath = join(dir, 'script.json');
  const journalDir = join(dir, 'journal');
  const scratchRoot = join(dir, 'scratch');
  mkdirSync(journalDir);
  mkdirSync(scratchRoot);
  writeFileSync(scriptPath, JSON.stringify(script));
  const journal = () =>
    readdirSync(journalDir)
      .filter((name) => name.endsWith('.jsonl'))
      .sort()
      .map((name) =>
        readFileSync(join(journalDir, name), 'utf8')
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line)),
      );
  const frames = (direction) =>
    journal()
      .flat()
      .filter((e) => (direction === undefined ? e.kind.startsWith('acp_') : e.kind === `acp_${direction}`))
      .map((e) => e.frame);
  return {
    dir,
    scriptPath,
    journalDir,
    scratchRoot,
    server: { command: fakeBinary(), args: ['--script', scriptPath, '--journal', journalDir] },
    /** What the confined fake (B06) must also reach: its script, and its journal to write. */
    allow: { allowRead: [scriptPath], allowWrite: [journalDir] },
    journal,
    frames,
    /** The ACP methods the client sent (requests and notifications), in order. */
    methods: () =>
      frames('in')
        .filter((f) => typeof f.method === 'string')
        .map((f) => f.method),
    /** Live (not zombie) processes whose command line names this setup's script. */
    pids: () => livePids(scriptPath),
    /** What is left under the scratch root. */
    scratchLeft: () => readdirSync(scratchRoot),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Live processes whose command line contains `needle` (node builtins only: the pack
 * test's child hosts import this file by its path).
 * @param {string} needle - a path unique to one test (a setup's `scriptPath`).
 * @returns {number[]} their pids.
 */
export function livePids(needle) {
  const pids = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (!cmdline.includes(needle)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') pids.push(Number(name));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}
