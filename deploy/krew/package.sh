#!/usr/bin/env bash
# Release archives for krew, and the krew manifest with their checksums.
#
#   deploy/krew/package.sh [--out DIR] [--bin-dir DIR]
#       Builds the release binaries for this machine (deploy/build-release.sh), or takes
#       them from --bin-dir, packs vmctl-vVERSION-OS-ARCH.tar.gz into DIR (default dist/)
#       with kubectl-vmctl, kubectl_complete-vmctl, vmctl, LICENSE* and README.md, and prints
#       its sha256 ("SUM  PATH", as sha256sum does). GZIP_LEVEL (default 9) trades size for
#       time (tests/krew.rs packs debug binaries with 1).
#   deploy/krew/package.sh render [--out DIR]
#       Prints deploy/krew/vmctl.yaml with each platform's uri under RELEASE_BASE_URL and the
#       real sha256 of every archive DIR holds (platforms without an archive keep theirs).
#
# Build each platform's archive on that platform (or with a cross toolchain and --bin-dir),
# collect them in one DIR, then render.
set -euo pipefail

# Where release archives are published: each platform's archive is downloaded from
# $RELEASE_BASE_URL/vVERSION/vmctl-vVERSION-OS-ARCH.tar.gz. This must be set to where the
# releases really are published before the rendered manifest goes to a krew index.
RELEASE_BASE_URL="${RELEASE_BASE_URL:-https://github.com/vmctl/vmctl/releases/download}"

root="$(cd "$(dirname "$0")/../.." && pwd)"
manifest="$root/deploy/krew/vmctl.yaml"

die() { echo "package.sh: $*" >&2; exit 1; }

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

# The package version of Cargo.toml (the first `version =` line, in [package]).
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
[[ -n "$version" ]] || die "no version in $root/Cargo.toml"

# krew's os/arch names for this machine.
host_platform() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) die "unsupported OS $(uname -s)" ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=amd64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) die "unsupported architecture $(uname -m)" ;;
  esac
  echo "$os-$arch"
}

command="pack"
if [[ "${1:-}" == "render" ]]; then
  command="render"
  shift
fi
out="$root/dist"
bin_dir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out="${2:?--out needs a directory}"; shift 2 ;;
    --bin-dir) bin_dir="${2:?--bin-dir needs a directory}"; shift 2 ;;
    *) die "unknown argument $1 (see the comment at the top of $0)" ;;
  esac
done

pack() {
  local platform archive
  platform="$(host_platform)"
  archive="$out/vmctl-v$version-$platform.tar.gz"
  mkdir -p "$out"
  stage="$(mktemp -d)"
  build=""
  trap 'rm -rf -- "$stage" ${build:+"$build"}' EXIT
  if [[ -z "$bin_dir" ]]; then
    # The release build the image uses too (binaries without line tables).
    build="$(mktemp -d)"
    "$root/deploy/build-release.sh" "$build" >&2
    bin_dir="$build/bin"
  fi
  for bin in kubectl-vmctl kubectl_complete-vmctl vmctl; do
    [[ -x "$bin_dir/$bin" ]] || die "$bin_dir/$bin is missing"
    # A copy, never a link: krew extracts regular files and directories only.
    cp -L "$bin_dir/$bin" "$stage/$bin"
  done
  for doc in "$root"/LICENSE* "$root/README.md"; do
    [[ -f "$doc" ]] && cp -L "$doc" "$stage/"
  done
  # Files at the top of the archive, as the manifest's `files` name them.
  (cd "$stage" && tar -cf - -- *) | gzip -"${GZIP_LEVEL:-9}" >"$archive"
  echo "$(sha256 "$archive")  $archive"
}

render() {
  local manifest_version
  manifest_version="$(sed -n 's/^  version: \(.*\)$/\1/p' "$manifest")"
  [[ "$manifest_version" == "v$version" ]] ||
    die "$manifest says version $manifest_version, Cargo.toml says v$version: update the manifest"
  local script=() name sum
  script+=(-e "s#^\(    uri: \).*/\(v$version/vmctl-v$version-[a-z0-9]*-[a-z0-9]*\.tar\.gz\)\$#\1$RELEASE_BASE_URL/\2#")
  shopt -s nullglob
  for archive in "$out"/vmctl-v"$version"-*.tar.gz; do
    name="$(basename "$archive")"
    sum="$(sha256 "$archive")"
    # From the uri of that archive to the next sha256 line of its platform.
    script+=(-e "\#/$name\$#,/^    sha256:/ s/^    sha256: .*/    sha256: $sum/")
  done
  sed "${script[@]}" "$manifest"
}

case "$command" in
  pack) pack ;;
  render) render ;;
esac
