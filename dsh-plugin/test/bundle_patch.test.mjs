// The bundle patch, loaded and composed by DSH's own loader code (`@deepseek-ai/dsh-app-boot`:
// `loadOverlayPatches` parses a bundle's cordis.patch.yml, `composeEntries` applies patch
// layers with the include's `applyEntryPatches`, as `loadProfile` and `boot` do), over
// dsh-base 0.1.0-rc.8's own bundle patch (vendored verbatim in test/fixtures, loaded the same
// way). The names it must use are checked against the plugin and the Rust constants.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { composeEntries, loadOverlayPatches } from '@deepseek-ai/dsh-app-boot';
import plugin, { DEFAULT_PROVIDER } from '../index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

// dsh-base 0.1.0-rc.8's cordis.patch.yml: its vendoring header, then the file verbatim.
const DSH_BASE = join(root, 'test', 'fixtures', 'dsh-base-0.1.0-rc.8.cordis.patch.yml');
const DSH_BASE_SHA256 = '9870a518274194c0e1ebd870cee2737fbc2ffc04ae36887871ffe6fcf74beac1';
const HEADER_END = '# --- end of the vendoring header ---\n';

/** A Rust `pub const NAME: &str = "..."` of the adapter crate. */
function rustConst(file, name) {
  const source = readFileSync(join(root, '..', 'adapter', 'src', file), 'utf8');
  const found = source.match(new RegExp(`pub const ${name}: &str = "([^"]+)";`));
  assert.ok(found, `${name} in adapter/src/${file}`);
  return found[1];
}

test('the bundle patch mounts the plugin and makes antigravity-acp/server-default the model of fresh chats', () => {
  assert.equal(manifest.dsh.bundle.patch, './cordis.patch.yml', 'the package declares its bundle patch');
  const vendored = readFileSync(DSH_BASE, 'utf8');
  const body = vendored.slice(vendored.indexOf(HEADER_END) + HEADER_END.length);
  assert.equal(
    createHash('sha256').update(body).digest('hex'),
    DSH_BASE_SHA256,
    "the fixture is dsh-base's file, unchanged",
  );
  const warnings = [];
  const base = loadOverlayPatches('@deepseek-ai/dsh-base', DSH_BASE);
  const patches = loadOverlayPatches('antigravity-acp-dsh', join(root, manifest.dsh.bundle.patch));
  const entries = composeEntries([base, patches], (warning) => warnings.push(warning));
  assert.deepEqual(warnings, [], 'every row the patch targets exists');
  assert.deepEqual(
    entries.find((e) => e.id === 'llm'),
    { id: 'llm', name: '@deepseek-ai/dsh-llm' },
    "dsh-base's llm row is there",
  );

  const model = entries.find((e) => e.id === 'agent-default-model');
  assert.deepEqual(model, {
    id: 'agent-default-model',
    name: '@deepseek-ai/dsh-agent-default-model',
    config: { provider: rustConst('config.rs', 'ADAPTER_ID'), model: rustConst('config.rs', 'SERVER_DEFAULT_MODEL') },
  });

  const mounted = entries.filter((e) => e.name === manifest.name);
  assert.equal(mounted.length, 1, 'the plugin is mounted once, by its package name');
  assert.equal(mounted[0].id, plugin.name, 'the row id is the plugin name');
  assert.equal(mounted[0].config.provider, DEFAULT_PROVIDER);
  assert.equal(DEFAULT_PROVIDER, rustConst('config.rs', 'ADAPTER_ID'));
  assert.equal(model.config.provider, mounted[0].config.provider, 'fresh chats use the route the plugin registers');
});
