/**
 * The notices and the SBOM of one platform's addon, from what the tools say, not by hand:
 * `cargo metadata --filter-platform` (the crates the addon's build compiles for that
 * target: `antigravity-acp-dsh` and its normal dependencies, build scripts and dev
 * dependencies left out) and `cargo deny list` (each crate's licence, as cargo-deny reads
 * and clarifies it under deny.toml). `ci/notices.sh` runs both and calls this.
 *
 *   node ci/notices.mjs --triple T --metadata META.json --licences LIST.json \
 *        --notices OUT.md [--sbom OUT.spdx.json]
 *
 * The notices give, per licence, the crates under it, then every licence text the crates
 * ship (their LICENSE*, LICENCE*, COPYING*, NOTICE* files, each distinct text once,
 * naming the crates it came from). A crate that ships no licence file is listed by its
 * SPDX expression with its repository. The SBOM is SPDX 2.3 JSON: the addon, and each crate
 * with its version, licence, crates.io purl and checksum (Cargo.lock's). The crates are
 * those both tools name: cargo-deny's list (the addon's own graph, with the features its
 * build takes) reached through normal dependencies in cargo metadata (whose features are the
 * whole workspace's, so it alone would list crates the addon never compiles). Exits 1 when
 * cargo-deny lists one of them with no licence, or lists none at all.
 * @module ci/notices
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ADDON_CRATE = 'antigravity-acp-dsh';
const LICENCE_FILE = /^(LICEN[CS]E|COPYING|NOTICE|UNLICENSE)([-._].*)?$/i;

/** @param {string[]} argv */
function options(argv) {
  const get = (flag) => {
    const at = argv.indexOf(flag);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const picked = {
    triple: get('--triple'),
    metadata: get('--metadata'),
    licences: get('--licences'),
    notices: get('--notices'),
    sbom: get('--sbom'),
  };
  for (const key of ['triple', 'metadata', 'licences', 'notices']) {
    if (!picked[key]) throw new Error(`notices.mjs: --${key} is required`);
  }
  return picked;
}

/**
 * The packages the addon's build links for the target: `antigravity-acp-dsh` and every
 * package reached from it through normal dependencies.
 * @param {any} metadata - `cargo metadata --format-version 1 --filter-platform T`.
 */
export function linkedPackages(metadata) {
  const byId = new Map(metadata.packages.map((pkg) => [pkg.id, pkg]));
  const nodes = new Map(metadata.resolve.nodes.map((node) => [node.id, node]));
  const start = metadata.packages.find((pkg) => pkg.name === ADDON_CRATE && pkg.source === null);
  if (!start) throw new Error(`cargo metadata has no ${ADDON_CRATE}`);
  const seen = new Set([start.id]);
  const queue = [start.id];
  while (queue.length) {
    const node = nodes.get(queue.shift());
    for (const dep of node?.deps ?? []) {
      const normal = dep.dep_kinds.some((kind) => kind.kind === null);
      if (normal && !seen.has(dep.pkg)) {
        seen.add(dep.pkg);
        queue.push(dep.pkg);
      }
    }
  }
  return [...seen]
    .map((id) => byId.get(id))
    .sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
}

/**
 * Each crate's licence expression from `cargo deny list --format json --layout crate`:
 * `{"name version source": {"licenses": [...]}}`.
 * @param {any} list
 * @returns {Map<string, string>} `name version` → the expression.
 */
export function licencesOf(list) {
  const found = new Map();
  for (const [key, value] of Object.entries(list)) {
    const [name, version] = key.split(' ');
    const licences = value.licenses ?? value.licences ?? [];
    found.set(`${name} ${version}`, licences.join(' AND '));
  }
  return found;
}

/**
 * A crate's SPDX expression: its manifest's `license` (the old `/` spelled `OR`), else the
 * licences cargo-deny found in its files (all of them apply: `AND`).
 */
function expression(pkg, licences) {
  if (pkg.license) return pkg.license.replaceAll('/', ' OR ');
  return licences.get(`${pkg.name} ${pkg.version}`) || 'NOASSERTION';
}

/** The licence files a crate's source ships, as `[file name, text]`. */
function licenceFiles(pkg) {
  const dir = dirname(pkg.manifest_path);
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && LICENCE_FILE.test(entry.name))
    .map((entry) => [entry.name, readFileSync(join(dir, entry.name), 'utf8').trim()]);
}

/** The notices' Markdown. */
export function noticesText(triple, packages, licences) {
  const byLicence = new Map();
  const texts = new Map();
  const lines = [
    `# Third-party notices: antigravity-acp-dsh for ${triple}`,
    '',
    `The addon in this package is compiled from this project's crates (Apache-2.0, see LICENSE) and`,
    `the ${packages.length - 1} crates below, whose licences and notices follow. This file is`,
    'generated by ci/notices.sh from `cargo metadata` and `cargo deny list`.',
    '',
    '## Crates by licence',
    '',
  ];
  for (const pkg of packages) {
    if (pkg.name === ADDON_CRATE) continue;
    const licence = expression(pkg, licences);
    byLicence.set(licence, [...(byLicence.get(licence) ?? []), `${pkg.name} ${pkg.version}`]);
    const files = licenceFiles(pkg);
    for (const [, text] of files) {
      const key = createHash('sha256').update(text).digest('hex');
      const entry = texts.get(key) ?? { text, crates: [] };
      entry.crates.push(`${pkg.name} ${pkg.version}`);
      texts.set(key, entry);
    }
    if (files.length === 0) {
      const key = `none:${pkg.name}`;
      texts.set(key, {
        text: `(no licence file shipped; ${licence}; ${pkg.repository ?? 'crates.io'})`,
        crates: [`${pkg.name} ${pkg.version}`],
      });
    }
  }
  for (const [licence, crates] of [...byLicence].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`- **${licence}** (${crates.length}): ${crates.join(', ')}`);
  }
  lines.push('', '## Licence texts', '');
  for (const { text, crates } of [...texts.values()].sort((a, b) => a.crates[0].localeCompare(b.crates[0]))) {
    lines.push(`### ${crates.join(', ')}`, '', '```text', text.replaceAll('```', "'''"), '```', '');
  }
  return `${lines.join('\n')}\n`;
}

/** Cargo.lock's checksum of every registry crate, by `name version`. */
function lockChecksums() {
  const lock = readFileSync(join(root, 'Cargo.lock'), 'utf8');
  const sums = new Map();
  for (const block of lock.split('[[package]]')) {
    const name = /\nname = "([^"]+)"/.exec(block)?.[1];
    const version = /\nversion = "([^"]+)"/.exec(block)?.[1];
    const checksum = /\nchecksum = "([0-9a-f]{64})"/.exec(block)?.[1];
    if (name && version && checksum) sums.set(`${name} ${version}`, checksum);
  }
  return sums;
}

/** An SPDX 2.3 document of the addon and its crates. */
export function sbom(triple, packages, licences) {
  const sums = lockChecksums();
  const addon = packages.find((pkg) => pkg.name === ADDON_CRATE);
  const ref = (pkg) => `SPDXRef-Package-${pkg.name}-${pkg.version}`.replace(/[^A-Za-z0-9.-]/g, '-');
  const spdxPackages = packages.map((pkg) => {
    const checksum = sums.get(`${pkg.name} ${pkg.version}`);
    const licence = expression(pkg, licences);
    return {
      SPDXID: ref(pkg),
      name: pkg.name,
      versionInfo: pkg.version,
      downloadLocation: pkg.source
        ? `https://crates.io/api/v1/crates/${pkg.name}/${pkg.version}/download`
        : 'NOASSERTION',
      filesAnalyzed: false,
      licenseConcluded: licence,
      licenseDeclared: (pkg.license ?? 'NOASSERTION').replaceAll('/', ' OR '),
      copyrightText: 'NOASSERTION',
      ...(checksum ? { checksums: [{ algorithm: 'SHA256', checksumValue: checksum }] } : {}),
      ...(pkg.source
        ? {
            externalRefs: [
              {
                referenceCategory: 'PACKAGE-MANAGER',
                referenceType: 'purl',
                referenceLocator: `pkg:cargo/${pkg.name}@${pkg.version}`,
              },
            ],
          }
        : {}),
    };
  });
  return {
    spdxVersion: 'SPDX-2.3',
    dataLicense: 'CC0-1.0',
    SPDXID: 'SPDXRef-DOCUMENT',
    name: `antigravity-acp-dsh ${addon.version} ${triple}`,
    documentNamespace: `https://spdx.org/spdxdocs/antigravity-acp-dsh-${addon.version}-${triple}`,
    creationInfo: {
      created: new Date(Number(process.env.SOURCE_DATE_EPOCH ?? Date.now() / 1000) * 1000)
        .toISOString()
        .replace(/\.\d+Z$/, 'Z'),
      creators: ['Tool: antigravity-acp ci/notices.mjs (cargo metadata, cargo-deny)'],
    },
    documentDescribes: [ref(addon)],
    packages: spdxPackages,
    relationships: packages
      .filter((pkg) => pkg !== addon)
      .map((pkg) => ({ spdxElementId: ref(addon), relationshipType: 'DEPENDS_ON', relatedSpdxElement: ref(pkg) })),
  };
}

function main() {
  const opts = options(process.argv.slice(2));
  const metadata = JSON.parse(readFileSync(opts.metadata, 'utf8'));
  const licences = licencesOf(JSON.parse(readFileSync(opts.licences, 'utf8')));
  // The crates both tools name: reached through normal dependencies (cargo metadata, whose
  // features are the whole workspace's) and in the addon's own graph (cargo-deny's list,
  // with the features the addon's build takes).
  const packages = linkedPackages(metadata).filter(
    (pkg) => pkg.name === ADDON_CRATE || (pkg.source !== null && licences.has(`${pkg.name} ${pkg.version}`)),
  );
  const unlicensed = packages.filter((pkg) => pkg.name !== ADDON_CRATE && !licences.get(`${pkg.name} ${pkg.version}`));
  if (unlicensed.length || packages.length < 2) {
    const named = unlicensed.map((pkg) => `${pkg.name} ${pkg.version}`).join(', ');
    console.error(`notices: no licence listed for ${named || 'any crate'}`);
    process.exitCode = 1;
    return;
  }
  writeFileSync(opts.notices, noticesText(opts.triple, packages, licences));
  if (opts.sbom) writeFileSync(opts.sbom, `${JSON.stringify(sbom(opts.triple, packages, licences), null, 2)}\n`);
  console.log(
    `notices: ${packages.length - 1} crates for ${opts.triple} → ${opts.notices}${opts.sbom ? ` and ${opts.sbom}` : ''}`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) main();
