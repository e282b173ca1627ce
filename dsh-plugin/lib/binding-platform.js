/**
 * Which prebuilt addon fits a platform, in napi-rs's spelling: the table of targets
 * (rust triple, platform tag, npm package, addon file) and `choosePackage`, a pure function
 * of the platform, the architecture and a `process.report`-like object. No I/O, no imports:
 * the loader (`binding.js`) and the build script (`scripts/build.mjs`) share it, and tests
 * call it with any platform.
 * @module antigravity-acp-dsh/lib/binding-platform
 */

/** The main package's name; a platform package is `${BINARY}-<tag>`. */
export const BINARY = 'antigravity-acp-dsh';

/**
 * Every target a platform package exists for, by napi-rs's platform tag. `libc` only on
 * Linux: npm skips a package whose `libc` does not match, on every other system too.
 */
export const TARGETS = Object.freeze({
  'linux-x64-gnu': Object.freeze({ triple: 'x86_64-unknown-linux-gnu', os: 'linux', cpu: 'x64', libc: 'glibc' }),
  'linux-arm64-gnu': Object.freeze({ triple: 'aarch64-unknown-linux-gnu', os: 'linux', cpu: 'arm64', libc: 'glibc' }),
  'darwin-x64': Object.freeze({ triple: 'x86_64-apple-darwin', os: 'darwin', cpu: 'x64' }),
  'darwin-arm64': Object.freeze({ triple: 'aarch64-apple-darwin', os: 'darwin', cpu: 'arm64' }),
  'win32-x64-gnu': Object.freeze({ triple: 'x86_64-pc-windows-gnu', os: 'win32', cpu: 'x64' }),
  // Windows on Arm with an arm64 Node (Node's own Windows arm64 build): LLVM's MinGW ABI,
  // linked by zig. An x64 Node there, which Windows emulates, takes win32-x64-gnu.
  'win32-arm64-gnu': Object.freeze({ triple: 'aarch64-pc-windows-gnullvm', os: 'win32', cpu: 'arm64' }),
});

/** @typedef {keyof typeof TARGETS} Tag */

/** The platform tags a binary is built for. */
export const PLATFORMS = Object.freeze(/** @type {Tag[]} */ (Object.keys(TARGETS)));

/**
 * The npm package of a platform tag.
 * @param {string} tag - e.g. `linux-x64-gnu`.
 * @returns {string} e.g. `antigravity-acp-dsh-linux-x64-gnu`.
 */
export function packageName(tag) {
  return `${BINARY}-${tag}`;
}

/**
 * The addon file of a platform tag (in its package, and the local build's name).
 * @param {string} tag - e.g. `linux-x64-gnu`.
 * @returns {string} e.g. `antigravity-acp-dsh.linux-x64-gnu.node`.
 */
export function addonFile(tag) {
  return `${BINARY}.${tag}.node`;
}

/**
 * The platform tag of a rust target triple.
 * @param {string} triple - e.g. `aarch64-apple-darwin`.
 * @returns {string | undefined} e.g. `darwin-arm64`; `undefined` for a triple no package is for.
 */
export function tagOfTriple(triple) {
  return PLATFORMS.find((tag) => TARGETS[tag].triple === triple);
}

/**
 * Which C library a Linux process runs on, from Node's diagnostic report: glibc sets
 * `header.glibcVersionRuntime`, musl does not. `excludeNetwork` is set first (the report
 * would otherwise resolve every open socket's host name) and restored after.
 * @param {{getReport?: () => any, excludeNetwork?: boolean} | undefined} report -
 *   `process.report`, or a stand-in.
 * @returns {'glibc' | 'musl'} `glibc` when no report can be made (nothing says musl).
 */
export function detectLibc(report) {
  if (typeof report?.getReport !== 'function') return 'glibc';
  const excluded = report.excludeNetwork;
  report.excludeNetwork = true;
  try {
    return report.getReport()?.header?.glibcVersionRuntime ? 'glibc' : 'musl';
  } finally {
    report.excludeNetwork = excluded;
  }
}

/**
 * @typedef {object} Choice
 * @property {string} platform - `platform-arch`, with `-glibc`/`-musl` on Linux
 *   (e.g. `linux-x64-glibc`, `darwin-arm64`): what an error names.
 * @property {string} tag - napi-rs's platform tag (`linux-x64-gnu`, `win32-x64-gnu`, …).
 * @property {string} packageName - the platform package looked for.
 * @property {string} file - the addon file in that package (and a local build's name).
 * @property {boolean} supported - whether a package for `tag` exists.
 * @property {string} [reason] - why not, when not supported.
 */

/**
 * The platform package for a platform. Windows maps to the GNU builds (x64: MinGW's; arm64:
 * LLVM's MinGW, `gnullvm`; the only Windows ABIs built; DSH itself is plain JS, so the
 * addon's C runtime is its own). Linux reads the
 * C library from the report; musl has no package yet.
 * @param {{platform: string, arch: string, report?: any}} host - `process.platform`,
 *   `process.arch`, and `process.report` (read on Linux only).
 * @returns {Choice}
 */
export function choosePackage({ platform, arch, report }) {
  const libc = platform === 'linux' ? detectLibc(report) : undefined;
  const described = libc ? `${platform}-${arch}-${libc}` : `${platform}-${arch}`;
  let tag = `${platform}-${arch}`;
  if (platform === 'linux') tag += libc === 'musl' ? '-musl' : '-gnu';
  if (platform === 'win32') tag += '-gnu';
  const choice = {
    platform: described,
    tag,
    packageName: packageName(tag),
    file: addonFile(tag),
    supported: Object.hasOwn(TARGETS, tag),
  };
  if (choice.supported) return choice;
  const reason =
    libc === 'musl'
      ? 'musl C libraries (Alpine and the like) have no build yet: the addon and the Antigravity server both need glibc'
      : `no build for ${described} (built: ${PLATFORMS.join(', ')})`;
  return { ...choice, reason };
}
