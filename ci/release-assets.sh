#!/usr/bin/env bash
# The release's assets, checked and summed, in the folder the build jobs filled
# (ci/package.sh's output, one folder per platform merged into one):
#
#   bash ci/release-assets.sh DIR
#
# DIR must hold, for every platform tag of dsh-plugin/lib/binding-platform.js, its
# tarball (antigravity-acp-dsh-<tag>-<version>.tgz), its addon
# (antigravity-acp-dsh.<tag>.node) and the addon's SBOM (antigravity-acp-dsh.<tag>.spdx.json),
# and the main package's tarball (antigravity-acp-dsh-<version>.tgz), all at the version
# `node ci/version.mjs` prints. It writes DIR/SHA256SUMS (every other file, sorted by name;
# `sha256sum -c` reads it) and DIR/notes.md (the version's CHANGELOG section). Exits 1
# naming whatever is missing or at another version. RELEASE_TAGS="TAG ..." expects only those
# platforms, and NOTES_SECTION names another changelog section for the notes (the release
# rehearsal: its Linux builds, and "Unreleased").
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${1:?usage: ci/release-assets.sh DIR}"
version="$(node ci/version.mjs)"
# RELEASE_TAGS narrows the platforms expected (the rehearsal packs only those Linux builds).
tags="${RELEASE_TAGS:-$(node --input-type=module -e "import { PLATFORMS } from './dsh-plugin/lib/binding-platform.js'; console.log(PLATFORMS.join(' '))")}"
missing=()
[[ -f "$dir/antigravity-acp-dsh-$version.tgz" ]] || missing+=("antigravity-acp-dsh-$version.tgz")
for tag in $tags; do
  for file in "antigravity-acp-dsh-$tag-$version.tgz" "antigravity-acp-dsh.$tag.node" "antigravity-acp-dsh.$tag.spdx.json"; do
    [[ -f "$dir/$file" ]] || missing+=("$file")
  done
done
if ((${#missing[@]} > 0)); then
  for file in "${missing[@]}"; do printf 'release assets: %s is missing from %s\n' "$file" "$dir" >&2; done
  exit 1
fi
node ci/version.mjs notes "${NOTES_SECTION:-$version}" >"$dir/notes.md"
(
  cd "$dir"
  rm -f SHA256SUMS
  sums="$(find . -maxdepth 1 -type f ! -name notes.md -printf '%f\n' | LC_ALL=C sort | xargs sha256sum)"
  printf '%s\n' "$sums" >SHA256SUMS
)
echo "release assets: $(wc -l <"$dir/SHA256SUMS") files summed in $dir/SHA256SUMS, version $version"
