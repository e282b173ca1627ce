/**
 * The DSH hosts the plugin supports: the one table that the README's "Supported DSH
 * versions" section is checked against (`test/dsh-versions.test.mjs`), that the test
 * replaying DSH's plugin check reads, and whose `ci` folders `scripts/test.mjs` and
 * `ci/real-loop.sh` run the tests on.
 *
 * A host's version is DSH's release version: DSH releases its `@deepseek-ai/dsh-*` packages
 * as one family, all at the release's version, so a release's host and its `dsh-llm` carry
 * the same number. The one exception on npm: 0.1.1-rc.2 published `dsh-llm` (and
 * `dsh-invariants`) only, so a 0.1.1 host is `dsh-llm` 0.1.1-rc.2 with the rest at 0.1.0-rc.8.
 * Since DSH 0.1.7-rc.2 the app boot checks every `@deepseek-ai/dsh*` peer range of a plugin
 * against the host's version (`semver.satisfies(host, range, {includePrerelease: true})`)
 * and skips the whole bundle when one misses.
 * @module support/dsh-versions
 */

/**
 * @typedef {object} SupportedHost
 * @property {string} host - the DSH release's version (what the app boot checks).
 * @property {string | null} dshLlm - the `@deepseek-ai/dsh-llm` it carries, when npm has it
 *   (a GitHub-only release carries its own, which this project has not seen).
 * @property {string | null} ci - the folder (from the repository root) whose `node_modules`
 *   holds that `dsh-llm` for the Node tests and the real loop, or `null`: not on npm, not run.
 * @property {string} note - where it comes from, as the README shows it.
 * @property {boolean} [libCheckFails] - its `dsh-llm`'s own declarations fail a type check
 *   with `skipLibCheck` off in that host (0.1.1-rc.2's import `RequestImageAttachment` from
 *   `@deepseek-ai/dsh-attachment` ^0.1.1-rc.2, which npm never published; 0.1.0-rc.8 has none).
 */

/** @type {readonly SupportedHost[]} oldest first. */
export const SUPPORTED_HOSTS = Object.freeze([
  {
    host: '0.1.0-rc.8',
    dshLlm: '0.1.0-rc.8',
    ci: 'dsh-plugin',
    note: 'npm; every DSH package the tests use (dsh-plugin/package.json)',
  },
  {
    host: '0.1.1-rc.2',
    dshLlm: '0.1.1-rc.2',
    ci: 'ci/dsh-llm-0.1.1',
    note: 'npm publishes dsh-llm only at 0.1.1-rc.2: the rest stays 0.1.0-rc.8',
    libCheckFails: true,
  },
  {
    host: '0.1.7-rc.2',
    dshLlm: null,
    ci: null,
    note: 'GitHub only; the first host that checks plugins’ peer ranges',
  },
  {
    host: '0.2.0-rc.2',
    dshLlm: null,
    ci: null,
    note: 'GitHub only; skipped the TypeScript plugin 0.3.0 by its peer range',
  },
]);

/**
 * Host versions the plugin does not support, which its peer ranges must keep out (DSH then
 * skips the bundle rather than mount it on a host it was never run on): before the first
 * dsh-llm it was built on, and the next minor's pre-releases and releases.
 */
export const UNSUPPORTED_HOSTS = Object.freeze(['0.1.0-rc.7', '0.3.0-0', '0.3.0-rc.1', '0.3.0', '1.0.0']);

/**
 * Which Node runs on which host. `full` (the nightly's `dsh-matrix`, `DSH_MATRIX=full`): every
 * Node on every host. Otherwise (`.ci/run`, to stay within its time budget): each Node on
 * one host, in turn, and every host at least once, so every Node and every dsh-llm runs.
 * @template N, H
 * @param {readonly N[]} nodes - the Nodes, oldest first.
 * @param {readonly H[]} hosts - the hosts CI runs, the package's own first.
 * @param {boolean} [full]
 * @returns {Array<[N, H]>}
 */
export function pairs(nodes, hosts, full = process.env.DSH_MATRIX === 'full') {
  if (full) return nodes.flatMap((node) => hosts.map((host) => /** @type {[N, H]} */ ([node, host])));
  const count = Math.max(nodes.length, hosts.length);
  return Array.from(
    { length: count },
    (_, i) => /** @type {[N, H]} */ ([nodes[i % nodes.length], hosts[i % hosts.length]]),
  );
}

/** The peers DSH's app boot checks: every `@deepseek-ai/dsh*` one. */
export const CHECKED_PEER = /^@deepseek-ai\/dsh/;

/**
 * The README's "Supported DSH versions" table, from {@link SUPPORTED_HOSTS}: its lines, the
 * header first (`test/dsh-versions.test.mjs` holds the README to them).
 * @returns {string[]}
 */
export function readmeTable() {
  return [
    '| DSH (host version) | `@deepseek-ai/dsh-llm` | Run by CI | Where it comes from |',
    '|---|---|---|---|',
    ...SUPPORTED_HOSTS.map(
      (row) =>
        `| ${row.host} | ${row.dshLlm ?? 'its own (not on npm)'} | ${row.ci ? `yes (\`${row.ci}\`)` : 'no'} | ${row.note} |`,
    ),
  ];
}
