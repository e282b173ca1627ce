/**
 * Which platform this process runs on, in napi-rs's spelling, and which platforms have a
 * prebuilt addon. Shared by the loader and the build script.
 * @module antigravity-acp-dsh/lib/binding-platform
 */

/** The platforms a binary is built for. */
export const PLATFORMS = Object.freeze(['linux-x64-gnu']);

/**
 * The platform tag of this process.
 * @returns {string} e.g. `linux-x64-gnu`.
 */
export function platformTag() {
  const base = `${process.platform}-${process.arch}`;
  if (process.platform !== 'linux') return base;
  const glibc = process.report?.getReport?.()?.header?.glibcVersionRuntime;
  return `${base}-${glibc ? 'gnu' : 'musl'}`;
}
