#!/usr/bin/env bash
# Installs every Debian package autoshard needs that is missing; quiet and
# idempotent (apt-get update runs at most once, and only when something is
# missing). CUDA is not installed here: it is used from /usr/local/cuda when
# present.
set -euo pipefail

packages=(
  cmake ninja-build ccache g++
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libabsl-dev googletest libgtest-dev
  libopenmpi-dev openmpi-bin
  libopenblas-dev libdnnl-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libxxhash-dev
  python3-numpy
  libonnx-testdata
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "autoshard: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
