#!/usr/bin/env bash
# The main job: installs what is missing and builds autoshard, compiles the
# bundled GPT-style model (examples/gpt.mlir: embedding, attention, MLP, head;
# annotated on weights only) for 8 devices (dp=2 x mp=4), prints the plan,
# runs it on 8 CPU ranks (and on the GPU backend when a GPU is visible) and
# prints the comparison with the single-device run.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${AUTOSHARD_BUILD_DIR:-$root/build}"
model="${1:-$root/examples/gpt.mlir}"
mesh="${AUTOSHARD_MESH:-dp=2,mp=4}"
out="$build/main-job"

echo "== build"
"$root/scripts/build.sh"
mkdir -p "$out"

echo "== compile $(basename "$model") for mesh $mesh"
"$build/bin/autoshard" compile "$model" --mesh "$mesh" \
  --report "$out/report.json" -o "$out/partitioned.mlir"

echo "== plan"
/usr/bin/python3 "$root/scripts/print_plan.py" "$out/report.json"

echo "== run on 8 CPU ranks vs 1 rank"
"$build/bin/autoshard" verify "$model" --mesh "$mesh" --work-dir "$out/verify-cpu"

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "== run on the CUDA backend vs 1 CPU rank"
  "$build/bin/autoshard" verify "$model" --mesh "$mesh" --backend cuda \
    --work-dir "$out/verify-cuda"
fi
