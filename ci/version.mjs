#!/usr/bin/env node
/**
 * The project's one version and where it is copied. Its one source is the workspace's
 * `Cargo.toml` (`[workspace.package] version`); every other copy follows it:
 *
 * - each workspace crate (`version.workspace = true`) and its `Cargo.lock` entry;
 * - the main npm package (`dsh-plugin/package.json`), its `optionalDependencies` on the
 *   platform packages, and its `package-lock.json`;
 * - every platform package (`dsh-plugin/npm/<tag>/package.json`), whose `engines` is the
 *   main package's, copied too.
 *
 *   node ci/version.mjs                 # print the version
 *   node ci/version.mjs set 0.2.0       # set it everywhere, and open its CHANGELOG section
 *   node ci/version.mjs check [--tag v0.2.0]
 *                                       # exit 1 naming every copy that disagrees (and the
 *                                       # tag, when given, that is not `v` + the version)
 *   node ci/version.mjs notes 0.2.0     # print CHANGELOG.md's section for 0.2.0 (the
 *                                       # release's notes); exit 1 if it is missing or empty
 *   node ci/version.mjs unpublished --registry URL
 *                                       # exit 1 naming every package the registry already
 *                                       # has at this version (a release is refused before
 *                                       # anything is built); 2 if the registry cannot say
 *
 * `set` moves the entries under `## [Unreleased]` into a new `## [X.Y.Z] - <today>` section
 * (Keep a Changelog), so a release is: `set`, commit, tag `vX.Y.Z`, push the tag.
 * Needs nothing but Node.
 * @module ci/version
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// The checkout (a test points VERSION_ROOT at a copy of the files it edits).
const root = process.env.VERSION_ROOT || join(dirname(fileURLToPath(import.meta.url)), '..');
const CARGO_TOML = join(root, 'Cargo.toml');
const CARGO_LOCK = join(root, 'Cargo.lock');
const MAIN = join(root, 'dsh-plugin', 'package.json');
const LOCK = join(root, 'dsh-plugin', 'package-lock.json');
const PLATFORMS = join(root, 'dsh-plugin', 'npm');
const CHANGELOG = join(root, 'CHANGELOG.md');
/** Semantic Versioning 2.0's grammar (prerelease and build metadata included). */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
const WORKSPACE_VERSION = /(\[workspace\.package\][^[]*?\nversion = ")([^"]+)(")/;

/** @param {string} file */
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
/** @param {string} file @param {unknown} value */
const writeJson = (file, value) => writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
/** A file as the messages name it: from the checkout, with `/` on every system. @param {string} file */
const shown = (file) => relative(root, file).split(sep).join('/');

/** The one source: `[workspace.package] version` in the workspace's Cargo.toml. */
export function sourceVersion() {
  const found = WORKSPACE_VERSION.exec(readFileSync(CARGO_TOML, 'utf8'));
  if (!found) throw new Error(`${shown(CARGO_TOML)} has no [workspace.package] version`);
  return found[2];
}

/** Every platform package's manifest path, by folder (`dsh-plugin/npm/<tag>/package.json`). */
export function platformManifests() {
  return readdirSync(PLATFORMS, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(PLATFORMS, entry.name, 'package.json'))
    .sort();
}

/** The workspace crates' names, from each member's Cargo.toml. */
function workspaceCrates() {
  const members = /members = \[([^\]]*)\]/.exec(readFileSync(CARGO_TOML, 'utf8'))?.[1] ?? '';
  return [...members.matchAll(/"([^"]+)"/g)].map(([, dir]) => {
    const manifest = readFileSync(join(root, dir, 'Cargo.toml'), 'utf8');
    const name = /\[package\]\s*\nname = "([^"]+)"/.exec(manifest)?.[1];
    if (!name) throw new Error(`${dir}/Cargo.toml has no [package] name`);
    if (!/\nversion\.workspace = true/.test(manifest)) {
      throw new Error(`${dir}/Cargo.toml must take the workspace's version (version.workspace = true)`);
    }
    return name;
  });
}

/**
 * Every copy of the version and of the main package's `engines`, as `[where, found,
 * wanted]`, read from the files.
 * @param {string} version - the version every copy should hold.
 * @returns {Array<[string, string, string]>}
 */
export function copies(version) {
  const main = readJson(MAIN);
  const engines = JSON.stringify(main.engines ?? null);
  /** @type {Array<[string, string, string]>} */
  const found = [[`${shown(MAIN)} version`, main.version, version]];
  const manifests = platformManifests();
  const platforms = manifests.map(readJson);
  for (const [i, manifest] of manifests.entries()) {
    const pkg = platforms[i];
    found.push([`${shown(manifest)} version`, pkg.version, version]);
    found.push([`${shown(manifest)} engines`, JSON.stringify(pkg.engines ?? null), engines]);
    found.push([`${shown(MAIN)} optionalDependencies.${pkg.name}`, main.optionalDependencies?.[pkg.name], version]);
  }
  for (const name of Object.keys(main.optionalDependencies ?? {})) {
    if (!platforms.some((pkg) => pkg.name === name)) {
      found.push([`${shown(MAIN)} optionalDependencies.${name} (no such platform package)`, name, '(none)']);
    }
  }
  const lock = readJson(LOCK);
  found.push([`${shown(LOCK)} version`, lock.version, version]);
  found.push([`${shown(LOCK)} packages[""].version`, lock.packages?.['']?.version, version]);
  for (const pkg of platforms) {
    found.push([
      `${shown(LOCK)} packages[""].optionalDependencies.${pkg.name}`,
      lock.packages?.['']?.optionalDependencies?.[pkg.name],
      version,
    ]);
    const entry = lock.packages?.[`node_modules/${pkg.name}`];
    if (entry) found.push([`${shown(LOCK)} node_modules/${pkg.name}`, entry.version, version]);
  }
  const cargoLock = readFileSync(CARGO_LOCK, 'utf8');
  for (const name of workspaceCrates()) {
    const entry = crateEntry(name).exec(cargoLock);
    const at = entry ? /version = "([^"]+)"/.exec(entry[0])?.[1] : undefined;
    found.push([`${shown(CARGO_LOCK)} ${name}`, at ?? '(missing)', version]);
  }
  return found;
}

/**
 * A workspace crate's entry in Cargo.lock (a path crate: no `source` line follows its
 * version), with its version cut out: `$1` before it, `$2` after.
 * @param {string} name
 */
function crateEntry(name) {
  return new RegExp(`(\\[\\[package\\]\\]\\nname = "${name}"\\nversion = ")[^"]+("\\n(?!source))`);
}

/** The copies that disagree, as lines naming each. */
export function disagreements(version = sourceVersion()) {
  return copies(version)
    .filter(([, found, wanted]) => found !== wanted)
    .map(([where, found, wanted]) => `${where}: ${found ?? '(missing)'}, wanted ${wanted}`);
}

/**
 * CHANGELOG.md's section for a version: the lines after `## [X.Y.Z]` up to the next `## `.
 * @param {string} version
 * @param {string} [text] - the changelog's text (read from CHANGELOG.md when omitted).
 * @returns {string | undefined} the section's body, trimmed; undefined when there is none.
 */
export function changelogSection(version, text = readFileSync(CHANGELOG, 'utf8')) {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`## [${version}]`));
  if (start < 0) return undefined;
  const end = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  return lines
    .slice(start + 1, end < 0 ? undefined : end)
    .join('\n')
    .replace(/\n\[[^\]]+\]: \S+(\n|$)/g, '\n')
    .trim();
}

/**
 * Opens `## [version] - date` under `## [Unreleased]`, which keeps its heading and is left
 * empty. A changelog that already has the version is left as it is.
 * @param {string} text
 * @param {string} version
 * @param {string} date - `YYYY-MM-DD`.
 */
export function openRelease(text, version, date) {
  if (text.includes(`\n## [${version}]`)) return text;
  if (!text.includes('\n## [Unreleased]\n')) throw new Error('CHANGELOG.md has no "## [Unreleased]" heading');
  return text.replace('\n## [Unreleased]\n', `\n## [Unreleased]\n\n## [${version}] - ${date}\n`);
}

/** Writes `version` into every copy, and opens its changelog section. */
function setVersion(version) {
  const toml = readFileSync(CARGO_TOML, 'utf8');
  writeFileSync(CARGO_TOML, toml.replace(WORKSPACE_VERSION, `$1${version}$3`));
  const main = readJson(MAIN);
  main.version = version;
  const platforms = platformManifests();
  for (const manifest of platforms) {
    const pkg = readJson(manifest);
    pkg.version = version;
    pkg.engines = main.engines;
    writeJson(manifest, pkg);
    main.optionalDependencies = { ...main.optionalDependencies, [pkg.name]: version };
  }
  writeJson(MAIN, main);
  const lock = readJson(LOCK);
  lock.version = version;
  lock.packages[''].version = version;
  lock.packages[''].optionalDependencies = main.optionalDependencies;
  for (const name of Object.keys(main.optionalDependencies)) {
    const entry = lock.packages[`node_modules/${name}`];
    if (entry) entry.version = version;
  }
  writeJson(LOCK, lock);
  let cargoLock = readFileSync(CARGO_LOCK, 'utf8');
  for (const name of workspaceCrates()) {
    cargoLock = cargoLock.replace(crateEntry(name), `$1${version}$2`);
  }
  writeFileSync(CARGO_LOCK, cargoLock);
  const today = new Date().toISOString().slice(0, 10);
  writeFileSync(CHANGELOG, openRelease(readFileSync(CHANGELOG, 'utf8'), version, today));
}

/**
 * Which of the project's packages a registry already has at `version`: `npm view`, whose
 * E404 means "not there"; any other failure means the registry could not say.
 * @param {string} registry @param {string} version
 * @returns {{published: string[], unknown: string[]}}
 */
export function alreadyPublished(registry, version) {
  const names = [readJson(MAIN).name, ...platformManifests().map((file) => readJson(file).name)];
  const published = [];
  const unknown = [];
  for (const name of names) {
    const view = spawnSync('npm', ['view', `${name}@${version}`, 'version', '--registry', registry], {
      encoding: 'utf8',
      shell: process.platform === 'win32',
    });
    if (view.status === 0 && view.stdout.trim()) published.push(`${name}@${version}`);
    else if (view.status !== 0 && !/E404|404 Not Found/.test(view.stderr))
      unknown.push(`${name}: ${view.stderr.split('\n')[0]}`);
  }
  return { published, unknown };
}

/** The command line; returns the exit code. */
function main(args) {
  const [command, ...rest] = args;
  if (command === undefined) {
    console.log(sourceVersion());
    return 0;
  }
  if (command === 'set') {
    const [version] = rest;
    if (!version || !SEMVER.test(version)) {
      console.error(`version.mjs set: "${version ?? ''}" is not a semantic version (X.Y.Z[-pre])`);
      return 2;
    }
    setVersion(version);
    const left = disagreements(version);
    for (const line of left) console.error(line);
    console.log(`version ${version} set in ${copies(version).length} places`);
    return left.length ? 1 : 0;
  }
  if (command === 'check') {
    const version = sourceVersion();
    const problems = disagreements(version);
    const tagAt = rest.indexOf('--tag');
    if (tagAt >= 0 && rest[tagAt + 1] !== `v${version}`) {
      problems.push(`the tag ${rest[tagAt + 1] ?? '(none)'} is not v${version}, the version`);
    }
    if (!SEMVER.test(version)) problems.push(`${shown(CARGO_TOML)}: ${version} is not a semantic version`);
    for (const line of problems) console.error(line);
    if (problems.length) return 1;
    console.log(`version ${version}: all ${copies(version).length} copies agree`);
    return 0;
  }
  if (command === 'notes') {
    const [version = sourceVersion()] = rest;
    const section = changelogSection(version);
    if (!section) {
      console.error(`CHANGELOG.md has no entries under "## [${version}]"`);
      return 1;
    }
    console.log(section);
    return 0;
  }
  if (command === 'unpublished') {
    const at = rest.indexOf('--registry');
    const registry = at >= 0 ? rest[at + 1] : undefined;
    if (!registry) {
      console.error('version.mjs unpublished: --registry URL is required');
      return 2;
    }
    const version = sourceVersion();
    const { published, unknown } = alreadyPublished(registry, version);
    for (const line of unknown) console.error(`cannot tell whether ${line}`);
    for (const line of published) console.error(`${registry} already has ${line}: a version is published once`);
    if (published.length) return 1;
    if (unknown.length) return 2;
    console.log(`${registry} has none of the packages at ${version}`);
    return 0;
  }
  console.error(`version.mjs: unknown command "${command}" (set, check, notes, unpublished)`);
  return 2;
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  process.exitCode = main(process.argv.slice(2));
}
