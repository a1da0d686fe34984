#!/usr/bin/env bash
# Installs what is missing, configures (once) and builds autoshard in build/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
build="${AUTOSHARD_BUILD_DIR:-$root/build}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
# Ninja's [n/total] lines are the progress report of a long first build.
ninja -C "$build" ${AUTOSHARD_NINJA_FLAGS:-}
