/**
 * Builds the addon with cargo and copies it where the loader looks: beside the package root
 * (`antigravity-acp-dsh.<tag>.node`, a local build) and into the platform package
 * (`npm/<tag>/`, what ships prebuilt).
 *
 *   node scripts/build.mjs --release   # what a user installs (`npm run build`)
 *   node scripts/build.mjs --debug     # CI: debug, with the test hooks (`testPanic`)
 *   node scripts/build.mjs --release --target aarch64-apple-darwin   # another target, into
 *                                      # npm/darwin-arm64/ only (ci/cross.sh installs the tools)
 *   node scripts/build.mjs --release --bench --out FILE   # only to FILE, with `benchDrain`
 *                                                         # (the benchmark's own copy)
 *   node scripts/build.mjs --debug --no-test-hooks --target T --out FILE   # a debug build
 *                                      # as a package ships it (ci/package.sh): no test hooks
 *
 * `--target <rust triple>` is one of `lib/binding-platform.js`'s TARGETS (its tag names the
 * folder and the file): `cargo build --target`, except the darwin ones through `cargo
 * zigbuild` when it is installed (Debian's `cc` cannot compile C for darwin), Windows on arm64
 * (aarch64-pc-windows-gnullvm) through it too, with `LIBNODE_PATH` at a stub `node.lib`
 * (`ci/cross.sh` makes one), and
 * aarch64-unknown-linux-gnu linked by `aarch64-linux-gnu-gcc` unless
 * `CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER` says otherwise (windows-gnu links with
 * mingw-w64's `x86_64-w64-mingw32-gcc`, Rust's default for it). Without `--target`, the
 * host's own build, tagged as the loader tags this host.
 *
 * `--bench` adds the `bench` feature; a build without `--out` never takes it, so the addon
 * beside the loader and in the platform package (what ships) has no bench code.
 * `--no-test-hooks` leaves the `test-hooks` feature out of a debug build (a release never
 * has it): what `ci/package.sh` packs, which must never carry a test hook.
 *
 * Cargo's own `CARGO_TARGET_DIR` is honoured (the library's path is read from cargo's
 * messages, never assumed under `target/`).
 * @module scripts/build
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TARGETS, addonFile, choosePackage, tagOfTriple } from '../lib/binding-platform.js';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, '..');
const release = !process.argv.includes('--debug');
const outAt = process.argv.indexOf('--out');
const out = outAt === -1 ? undefined : resolve(process.argv[outAt + 1]);
const bench = process.argv.includes('--bench');
const testHooks = !release && !process.argv.includes('--no-test-hooks');
if (bench && !out) throw new Error('--bench builds only to --out FILE: the shipped addon has no bench code');
const targetAt = process.argv.indexOf('--target');
const triple = targetAt === -1 ? undefined : process.argv[targetAt + 1];
const tag =
  triple === undefined
    ? choosePackage({ platform: process.platform, arch: process.arch, report: process.report }).tag
    : tagOfTriple(triple);
if (tag === undefined) {
  const known = Object.values(TARGETS).map((target) => target.triple);
  throw new Error(`--target ${triple}: no platform package is for it (known: ${known.join(', ')})`);
}

const env = { ...process.env };
let subcommand = 'build';
if (triple?.endsWith('-apple-darwin') || triple?.endsWith('-windows-gnullvm')) {
  if (spawnSync('cargo', ['zigbuild', '--help'], { stdio: 'ignore' }).status === 0) subcommand = 'zigbuild';
  else
    console.error(
      'cargo-zigbuild is not installed: plain cargo cannot compile C for darwin or link Windows arm64 here (ci/cross.sh installs it)',
    );
}
if (triple === 'aarch64-unknown-linux-gnu')
  env.CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER ??= 'aarch64-linux-gnu-gcc';

const args = [subcommand, '--locked', '-p', 'antigravity-acp-dsh', '--message-format=json-render-diagnostics'];
if (triple !== undefined) args.push('--target', triple);
if (release) args.push('--release');
const features = [...(testHooks ? ['test-hooks'] : []), ...(bench ? ['bench'] : [])];
if (features.length > 0) args.push('--features', features.join(','));
const output = execFileSync('cargo', args, {
  cwd: pkg,
  env,
  stdio: ['ignore', 'pipe', 'inherit'],
  encoding: 'utf8',
  maxBuffer: 1 << 28,
});

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
// Another target's build goes into its package only: the loader never looks beside itself
// for a platform it is not running on.
const local = triple === undefined ? [join(pkg, file)] : [];
const targets = out ? [out] : [...local, ...(existsSync(platformDir) ? [join(platformDir, file)] : [])];
for (const target of targets) {
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(library, target);
  console.log(
    `${release ? 'release' : 'debug'}${testHooks ? ' (test hooks)' : ''}${bench ? ' bench' : ''} addon: ${target}`,
  );
}
