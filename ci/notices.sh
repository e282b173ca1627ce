#!/usr/bin/env bash
# The notices (and, when asked, the SBOM) of one platform's addon: the crates compiled into
# it for TRIPLE, each crate's licence as cargo-deny lists it, and every licence text those
# crates ship (ci/notices.mjs). Every platform package ships the result as
# THIRD-PARTY-NOTICES.md beside LICENSE (ci/package.sh); the release attaches the SBOMs.
#
#   bash ci/notices.sh TRIPLE NOTICES_OUT [SBOM_OUT]
#
# Installs cargo-deny when missing (ci/tools.sh cargo-deny). Reads only Cargo.lock and the crates'
# sources cargo already fetched (`cargo fetch --locked` first, for a fresh machine).
set -euo pipefail
cd "$(dirname "$0")/.."

triple="${1:?usage: ci/notices.sh TRIPLE NOTICES_OUT [SBOM_OUT]}"
notices="${2:?usage: ci/notices.sh TRIPLE NOTICES_OUT [SBOM_OUT]}"
sbom="${3:-}"
deny=target/tools/bin/cargo-deny
[[ -x "$deny" || -x "$deny.exe" ]] || bash ci/tools.sh cargo-deny >&2
[[ ! -x "$deny.exe" ]] || deny="$deny.exe"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cargo fetch --locked --quiet --target "$triple"
cargo metadata --format-version 1 --locked --filter-platform "$triple" >"$scratch/metadata.json"
"$deny" --log-level error --manifest-path dsh-plugin/Cargo.toml --target "$triple" --exclude-dev \
  list --format json --layout crate >"$scratch/licences.json"
args=(--triple "$triple" --metadata "$scratch/metadata.json" --licences "$scratch/licences.json" --notices "$notices")
[[ -z "$sbom" ]] || args+=(--sbom "$sbom")
node ci/notices.mjs "${args[@]}"
