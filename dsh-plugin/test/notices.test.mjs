// The notices and SBOM generator (ci/notices.mjs) on a small dependency graph of its own, in
// the shapes `cargo metadata` and `cargo deny list` print: which crates count as compiled
// into the addon, the licence each is listed under, the licence texts the crates ship, and
// the SPDX 2.3 document. The real graph is run by ci/package.sh in the release rehearsal,
// which checks every platform package ships the result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { licencesOf, linkedPackages, noticesText, sbom } from '../../ci/notices.mjs';

const REGISTRY = 'registry+https://github.com/rust-lang/crates.io-index';

/** A crate on disk (its licence files) and in cargo metadata's shape. */
function crate(dir, name, version, license, files = {}) {
  const home = join(dir, `${name}-${version}`);
  mkdirSync(home, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(home, file), text);
  const source = name === 'antigravity-acp-dsh' ? null : REGISTRY;
  return { id: `${name} ${version}`, name, version, license, source, manifest_path: join(home, 'Cargo.toml') };
}

const dep = (pkg, kind = null) => ({ pkg, dep_kinds: [{ kind, target: null }] });

test('only normal dependencies count, each under its manifest licence, texts once per distinct file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agy-notices-'));
  try {
    const packages = [
      crate(dir, 'antigravity-acp-dsh', '0.1.0', 'Apache-2.0'),
      crate(dir, 'serde', '1.0.0', 'MIT OR Apache-2.0', { 'LICENSE-MIT': 'MIT text', 'LICENSE-APACHE': 'APACHE text' }),
      crate(dir, 'itoa', '1.0.0', 'MIT/Apache-2.0', { 'LICENSE-MIT': 'MIT text' }),
      crate(dir, 'ring', '0.17.0', undefined, { LICENSE: 'ISC-ish text' }),
      crate(dir, 'cc', '1.0.0', 'MIT OR Apache-2.0', { 'LICENSE-MIT': 'cc text' }),
      crate(dir, 'proptest', '1.0.0', 'MIT OR Apache-2.0'),
    ];
    const metadata = {
      packages,
      resolve: {
        nodes: [
          {
            id: 'antigravity-acp-dsh 0.1.0',
            deps: [dep('serde 1.0.0'), dep('ring 0.17.0'), dep('cc 1.0.0', 'build'), dep('proptest 1.0.0', 'dev')],
          },
          { id: 'serde 1.0.0', deps: [dep('itoa 1.0.0')] },
        ],
      },
    };
    const linked = linkedPackages(metadata).map((pkg) => pkg.name);
    assert.deepEqual(
      linked,
      ['antigravity-acp-dsh', 'itoa', 'ring', 'serde'],
      'build and dev dependencies are not in the addon',
    );
    const list = {
      [`serde 1.0.0 ${REGISTRY}`]: { licenses: ['Apache-2.0', 'MIT'] },
      [`itoa 1.0.0 ${REGISTRY}`]: { licenses: ['Apache-2.0', 'MIT'] },
      [`ring 0.17.0 ${REGISTRY}`]: { licenses: ['ISC', 'OpenSSL'] },
    };
    const licences = licencesOf(list);
    assert.equal(licences.get('ring 0.17.0'), 'ISC AND OpenSSL');
    const kept = linkedPackages(metadata);
    const text = noticesText('x86_64-unknown-linux-gnu', kept, licences);
    assert.match(text, /- \*\*MIT OR Apache-2\.0\*\* \(2\): itoa 1\.0\.0, serde 1\.0\.0/, 'the old `/` is spelled OR');
    assert.match(
      text,
      /- \*\*ISC AND OpenSSL\*\* \(1\): ring 0\.17\.0/,
      'no manifest licence: the files cargo-deny read',
    );
    assert.match(text, /### itoa 1\.0\.0, serde 1\.0\.0\n\n```text\nMIT text\n```/, 'one text, both crates named');
    assert.doesNotMatch(text, /cc text/);
    const doc = sbom('x86_64-unknown-linux-gnu', kept, licences);
    assert.equal(doc.spdxVersion, 'SPDX-2.3');
    assert.equal(doc.packages.length, 4);
    assert.equal(doc.relationships.length, 3);
    assert.ok(
      doc.relationships.every(
        (r) => r.relationshipType === 'DEPENDS_ON' && r.spdxElementId === doc.documentDescribes[0],
      ),
    );
    const serde = doc.packages.find((pkg) => pkg.name === 'serde');
    assert.equal(serde.externalRefs[0].referenceLocator, 'pkg:cargo/serde@1.0.0');
    assert.equal(serde.licenseConcluded, 'MIT OR Apache-2.0');
    assert.ok(
      doc.packages.every((pkg) => /^SPDXRef-[A-Za-z0-9.-]+$/.test(pkg.SPDXID)),
      'SPDX ids use the allowed characters',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
