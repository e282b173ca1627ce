// The hand-written index.d.ts against what the JS really exports. `npm run typecheck` (tsc)
// holds each declared type to the JS (lib/config.js's schema to `Config`, the adapter class
// to its declaration, the default export to its type), but a type check cannot see a name
// the JS exports and the declarations forget, or a config field one side lacks (the schema's
// inferred type is open to extra keys): these tests compare the names themselves, reading
// the declarations as text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as plugin from '../index.js';
import { Config } from '../lib/config.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const declarations = readFileSync(join(root, 'index.d.ts'), 'utf8');

/**
 * The member names of an exported interface of index.d.ts.
 * @param {string} name - the interface.
 * @returns {string[]} sorted.
 */
function interfaceFields(name) {
  const body = declarations.match(new RegExp(`^export interface ${name} \\{\\n([\\s\\S]*?)^\\}`, 'm'));
  assert.ok(body, `index.d.ts declares the interface ${name}`);
  return [...body[1].matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1]).sort();
}

test('index.d.ts declares every value index.js exports, and no other', () => {
  const declared = [...declarations.matchAll(/^export declare (?:const|function|class) (\w+)/gm)].map((m) => m[1]);
  if (/^export default /m.test(declarations)) declared.push('default');
  assert.deepEqual(declared.sort(), Object.keys(plugin).sort());
});

test("index.d.ts's Config and ServerCommand name exactly the schema's fields", () => {
  assert.deepEqual(interfaceFields('Config'), Object.keys(Config.dict ?? {}).sort());
  assert.deepEqual(interfaceFields('ServerCommand'), Object.keys(Config.dict?.server.dict ?? {}).sort());
});

test("index.d.ts's Confinement names exactly the schema's modes", () => {
  const union = declarations.match(/^export type Confinement = (.*);$/m);
  assert.ok(union, 'index.d.ts declares the type Confinement');
  const declared = [...union[1].matchAll(/'([^']+)'/g)].map((m) => m[1]).sort();
  const modes = (Config.dict?.confinement.list ?? []).map((schema) => schema.value).sort();
  assert.deepEqual(declared, modes);
});
