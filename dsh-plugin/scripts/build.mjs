/**
 * Builds the addon with plain cargo and copies it where the loader looks: beside the
 * package root (`antigravity-acp-dsh.<platform>.node`, a local build) and into the platform
 * package (`npm/<platform>/`, what ships prebuilt).
 *
 *   node scripts/build.mjs --release   # what a user installs (`npm run build`)
 *   node scripts/build.mjs --debug     # CI: debug, with the test hooks (`testPanic`)
 *   node scripts/build.mjs --release --bench --out FILE   # only to FILE, with `benchDrain`
 *                                                         # (the benchmark's own copy)
 *
 * `--bench` adds the `bench` feature; a build without `--out` never takes it, so the addon
 * beside the loader and in the platform package (what ships) has no bench code.
 * @module scripts/build
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addonFile, choosePackage } from '../lib/binding-platform.js';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, '..');
const release = !process.argv.includes('--debug');
const outAt = process.argv.indexOf('--out');
const out = outAt === -1 ? undefined : resolve(process.argv[outAt + 1]);
const bench = process.argv.includes('--bench');
if (bench && !out) throw new Error('--bench builds only to --out FILE: the shipped addon has no bench code');
const tag = choosePackage({ platform: process.platform, arch: process.arch, report: process.report }).tag;

const args = ['build', '--locked', '-p', 'antigravity-acp-dsh', '--message-format=json-render-diagnostics'];
if (release) args.push('--release');
const features = [...(release ? [] : ['test-hooks']), ...(bench ? ['bench'] : [])];
if (features.length > 0) args.push('--features', features.join(','));
const output = execFileSync('cargo', args, { cwd: pkg, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 1 << 28 });

let library;
for (const line of output.split('\n')) {
  if (!line.startsWith('{')) continue;
  const message = JSON.parse(line);
  if (message.reason === 'compiler-artifact' && message.target?.name === 'antigravity_acp_dsh') {
    library = message.filenames.find((f) => /\.(so|dylib|dll)$/.test(f));
  }
}
if (!library || !existsSync(library)) throw new Error('cargo built no antigravity_acp_dsh library');

const file = addonFile(tag);
const platformDir = join(pkg, 'npm', tag);
const targets = out ? [out] : [join(pkg, file), ...(existsSync(platformDir) ? [join(platformDir, file)] : [])];
for (const target of targets) {
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(library, target);
  console.log(`${release ? 'release' : 'debug'}${bench ? ' bench' : ''} addon: ${target}`);
}
