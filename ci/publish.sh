#!/usr/bin/env bash
# Publishes every npm tarball in DIR (what ci/package.sh packed) to a registry: the platform
# packages first, the main package (antigravity-acp-dsh) last, so the main package never
# names an optional dependency the registry has not got.
#
#   bash ci/publish.sh --registry URL [--provenance] [--tag DIST_TAG] DIR
#
# Before any upload it asks the registry (`npm view name@version`) whether any of the
# tarballs' name@version already exist, and refuses, naming them, if one does (a version is
# published once); an answer other than "found" or "not found" (E404) refuses too. Then
# `npm publish TARBALL` one by one (--access public, --ignore-scripts); the first failure
# stops it, naming what was published and what was not.
#
# --provenance passes npm's --provenance (the hosted workflow's OIDC trusted publishing).
# --tag DIST_TAG passes npm's --tag (default: npm's, `latest`; `next` for a prerelease
# version, which npm refuses under `latest`).
# Credentials are the caller's npm configuration (a trusted-publishing OIDC exchange, or an
# `npm_config_//host/:_authToken` / NODE_AUTH_TOKEN-backed .npmrc the caller provides): this
# script writes no token anywhere.
#
# Stdout: `published NAME@VERSION` a line. Exit codes: 0 every tarball published; 1 one
# already exists (nothing uploaded), the registry could not be asked (nothing uploaded), or a
# publish failed (those before it stay published); 64 a usage error (no tarball in DIR,
# two main packages, an unknown option).
set -euo pipefail

die() { printf 'ci/publish.sh: %s\n' "$1" >&2; exit "${2:-1}"; }
((BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4))) || die "needs bash 4.4 or later, not $BASH_VERSION" 64
usage() { sed -n '2,25p' "$0" >&2; exit 64; }

registry=""
provenance=()
dist_tag=()
dir=""
while (($# > 0)); do
  case "$1" in
    --registry) [[ $# -ge 2 ]] || usage; registry="$2"; shift 2 ;;
    --provenance) provenance=(--provenance); shift ;;
    --tag) [[ $# -ge 2 ]] || usage; dist_tag=(--tag "$2"); shift 2 ;;
    -h | --help) usage ;;
    -*) printf 'ci/publish.sh: unknown option %s\n' "$1" >&2; usage ;;
    *) [[ -z "$dir" ]] || usage; dir="$1"; shift ;;
  esac
done
[[ -n "$registry" && -n "$dir" ]] || usage
[[ -d "$dir" ]] || die "$dir is not a folder" 64

MAIN=antigravity-acp-dsh
platforms=()
main=""
declare -A ids=()
shopt -s nullglob
for tarball in "$dir"/*.tgz; do
  id="$(tar -xzOf "$tarball" package/package.json | node -e \
    "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const p=JSON.parse(s);console.log(p.name+'@'+p.version)})")"
  ids[$tarball]="$id"
  if [[ "${id%@*}" == "$MAIN" ]]; then
    [[ -z "$main" ]] || die "two main packages in $dir: $main and $tarball" 64
    main="$tarball"
  else
    platforms+=("$tarball")
  fi
done
order=("${platforms[@]}")
[[ -z "$main" ]] || order+=("$main")
((${#order[@]} > 0)) || die "no tarball (*.tgz) in $dir" 64

# Whether NAME@VERSION is on the registry: 0 yes, 1 no (E404 or no such version), 2 unknown.
published() {
  local answer status=0
  answer="$(npm view "$1" version --registry "$registry" 2>&1)" || status=$?
  if ((status == 0)); then
    [[ -n "$answer" ]] && return 0
    return 1
  fi
  grep -q 'E404' <<<"$answer" && return 1
  printf '%s\n' "$answer" >&2
  return 2
}

existing=()
for tarball in "${order[@]}"; do
  status=0
  published "${ids[$tarball]}" || status=$?
  case "$status" in
    0) existing+=("${ids[$tarball]}") ;;
    1) ;;
    *) die "could not ask $registry about ${ids[$tarball]}: nothing was published" ;;
  esac
done
if ((${#existing[@]} > 0)); then
  die "already on $registry: ${existing[*]}; nothing was published (a version is published once: bump the version)"
fi

# npm refuses to publish a prerelease (X.Y.Z-rc.N) under its default tag, `latest`: a
# prerelease goes out as `next` unless --tag says otherwise, so `npm install` keeps the release.
if ((${#dist_tag[@]} == 0)) && [[ "${ids[${order[0]}]#*@}" == *-* ]]; then
  dist_tag=(--tag next)
fi

done_ids=()
for tarball in "${order[@]}"; do
  printf '== npm publish %s (%s)\n' "${ids[$tarball]}" "$tarball" >&2
  if ! npm publish "$tarball" --registry "$registry" --access public --ignore-scripts \
    "${dist_tag[@]}" "${provenance[@]}" >&2; then
    left=()
    for t in "${order[@]}"; do
      [[ " ${done_ids[*]} " == *" ${ids[$t]} "* ]] || left+=("${ids[$t]}")
    done
    die "npm publish ${ids[$tarball]} failed; published: ${done_ids[*]:-none}; not published: ${left[*]}"
  fi
  done_ids+=("${ids[$tarball]}")
  echo "published ${ids[$tarball]}"
done
