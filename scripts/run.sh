#!/usr/bin/env bash
# The main job: installs what is missing and builds autoshard, compiles the
# bundled GPT-style model (examples/gpt.mlir: embedding, attention, MLP, head;
# annotated on weights only) for 8 devices (dp=2 x mp=4), prints the plan,
# runs it on 8 CPU ranks (and on the GPU backend when a GPU is visible) and
# prints the comparison with the single-device run. Then it trains the same
# model (examples/gpt-train.mlir: weights marked trainable) for a few steps on
# 8 CPU ranks, prints the training step's plan and the loss per step, and
# checks the losses against the same step run on one rank.
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

train_model="$root/examples/gpt-train.mlir"
steps="${AUTOSHARD_TRAIN_STEPS:-5}"
echo "== train $(basename "$train_model") for $steps steps on 8 CPU ranks (Adam, cross-entropy)"
train="$out/train"
mkdir -p "$train"
# A fixed batch: token ids and next-token labels (seeded, reproducible).
"$build/bin/autoshard-run" "$root/examples/train-batch.mlir" --entry batch \
  --output-dir "$train/batch" > /dev/null
"$build/bin/autoshard" train "$train_model" --mesh "$mesh" \
  --input ids="$train/batch/output_0.npy" --labels "$train/batch/output_1.npy" \
  --loss cross_entropy --optimizer adam --lr 0.01 --steps "$steps" \
  --report "$train/report.json" --losses-out "$train/losses-8.json" \
  --params-out "$train/params-8" --work-dir "$train/work"

echo "== training-step plan"
/usr/bin/python3 "$root/scripts/print_plan.py" "$train/report.json"

echo "== the same steps on 1 rank"
"$build/bin/autoshard-opt" "$train_model" \
  --dist-training-step='loss=cross_entropy optimizer=adam lr=0.01' \
  -o "$train/train_step-1.mlir"
"$build/bin/autoshard-run" "$train/train_step-1.mlir" --entry train_step \
  --steps "$steps" --seed 1 --input ids="$train/batch/output_0.npy" \
  --input labels="$train/batch/output_1.npy" --losses-out "$train/losses-1.json" \
  --write-outputs=false
/usr/bin/python3 - "$train/losses-8.json" "$train/losses-1.json" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
worst = max(abs(x - y) for x, y in zip(a, b))
ok = len(a) == len(b) and worst <= 1e-5 * max(abs(y) for y in b)
print("losses, 8 ranks vs 1 rank: max |diff| %.2g -> %s" % (worst, "MATCH" if ok else "MISMATCH"))
sys.exit(0 if ok else 1)
PY
