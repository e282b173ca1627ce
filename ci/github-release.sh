#!/usr/bin/env bash
# The GitHub release of a tag, in two steps around the npm publication (release.yml), so a
# release is public only once npm took every package:
#
#   bash ci/github-release.sh draft DIR   # a draft release of $TAG (default: $GITHUB_REF_NAME)
#                                         # with DIR's tarballs, addons, SBOMs and SHA256SUMS
#                                         # (ci/release-assets.sh), its notes from DIR/notes.md
#   bash ci/github-release.sh publish     # the draft made public, marked latest (a prerelease
#                                         # tag vX.Y.Z-rc.N: marked prerelease)
#
# Uses the GitHub CLI (`gh`, on every hosted runner) with GH_TOKEN. With DRY_RUN=1 it
# prints the commands instead (the release rehearsal runs it so). A draft that exists
# already (a re-run) gets its assets replaced.
set -euo pipefail
cd "$(dirname "$0")/.."

tag="${TAG:-${GITHUB_REF_NAME:-}}"
[[ -n "$tag" ]] || { echo "github-release: no TAG (or GITHUB_REF_NAME)" >&2; exit 2; }
run() {
  if [[ "${DRY_RUN:-}" == 1 ]]; then
    printf 'would run:'
    printf ' %q' "$@"
    printf '\n'
  else
    "$@"
  fi
}

case "${1:-}" in
  draft)
    dir="${2:?usage: ci/github-release.sh draft DIR}"
    [[ -f "$dir/SHA256SUMS" && -f "$dir/notes.md" ]] || { echo "github-release: run ci/release-assets.sh $dir first" >&2; exit 1; }
    assets=()
    while IFS= read -r file; do assets+=("$dir/$file"); done < <(awk '{print $2}' "$dir/SHA256SUMS")
    assets+=("$dir/SHA256SUMS")
    if [[ "${DRY_RUN:-}" != 1 ]] && gh release view "$tag" >/dev/null 2>&1; then
      run gh release upload "$tag" --clobber "${assets[@]}"
    else
      run gh release create "$tag" --draft --verify-tag --title "$tag" --notes-file "$dir/notes.md" "${assets[@]}"
    fi
    ;;
  publish)
    # A prerelease (vX.Y.Z-rc.N) is marked so, and never becomes the latest release.
    if [[ "$tag" == *-* ]]; then
      run gh release edit "$tag" --draft=false --prerelease
    else
      run gh release edit "$tag" --draft=false --latest
    fi
    ;;
  *) sed -n '2,13p' "$0"; exit 2 ;;
esac
