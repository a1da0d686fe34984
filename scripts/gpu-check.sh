#!/usr/bin/env bash
# GPU check of issues 20 and 23 (the CUDA runtime and its generated kernels): one run on an H100/H200, < 7 min.
#
# 1. On the dev machine, from the repo root (builds, bundles, compiles plans):
#
#      scripts/gpu-check.sh --prepare
#
#    which runs, under the build lock:
#      ninja -C build-gpu autoshard-run RuntimeCudaTests KernelTests
#      ninja -C build autoshard autoshard-translate
#    then
#      ../shared/tools/device-bundle.sh .device build-gpu/bin/autoshard-run \
#          build-gpu/unittests/Runtime/RuntimeCudaTests
#    adds KernelTests (static MLIR, it lowers on the device: 98 MB, stripped
#    and xz-compressed to ~15 MB, .device/KernelTests.xz; the bundle's gzip
#    would take 23 MB) and writes .device/plans: for examples/gpt.mlir and the committed GPT
#    ONNX fixture (test/Train/Inputs/gpt/model.onnx, imported with its
#    weights), one-rank plans `autoshard compile X --lower-only -o P.asplan`
#    for --backend cpu --kernels=interpreted (the reference), --backend cuda
#    --kernels=interpreted (bytecode kernels) and --backend cuda
#    --kernels=compiled (generated PTX). The GPU needs no MLIR: the PTX is in
#    the plan.
#
# 2. On the device (the `run` tool; .device is in .git/info/exclude):
#
#      run(command="bash scripts/gpu-check.sh", carry=[".device"], timeout_s=420)
#
#    It runs RuntimeCudaTests (with the GEMM precisions: fp32, tf32, bf16,
#    fp16; bf16/f16 storage kernels; NCCL overlap on and off),
#    autoshard-bench-gpu-gemm (backend and program GEMMs next to cuBLASLt
#    called directly, each precision), KernelTests (every kernel kind generated vs the
#    CPU interpreter on random shapes; CUDA_HOME found for libdevice/ptxas),
#    each model's three plans (outputs compared: cuda-compiled vs
#    cuda-interpreted vs cpu, and the fixture against PyTorch eager on the
#    GPU and its committed torch output), `--repeat 50` step times, and
#    bench/runtime/torch_gpu.py for PyTorch eager's time, and the compiled
#    plans' --repeat runs with --cuda-graphs (runs replayed, step time, the
#    outputs exactly the plain ones'). Tables go to stdout
#    and $OUT/gpu-check.txt (+ outputs in $OUT/outputs).
#
#    Deferred device faults (issue 20): RuntimeCudaTests' ExecutorGraphTest
#    (a gather program recorded and replayed as a CUDA graph, and a bad index
#    written into the recorded buffers ending the replayed run in the
#    gather's error), the GPT plans' --cuda-graphs runs (replays counted:
#    the gather no longer keeps them plain), and the fixture run with an
#    out-of-range id (.device/plans/ids-oob.npy) under --cuda-graphs, which
#    must end in the gather's one-line error. The GEMM bench's ratios are
#    also given as medians of per-round ratios (p/c med, b/c med).
#
#    It also runs the fixture's forward in fp32/tf32/bf16/fp16 and its Adam
#    step in fp32/bf16 (plans compiled with --precision) next to PyTorch eager
#    in the same precision (torch_gpu.py --precision: autocast for bf16/fp16);
#    `bash scripts/gpu-check.sh --precision` runs only that part.
#
#    `bash scripts/gpu-check.sh --quick` (~1.5 min) runs the unit tests, the
#    generated kernels, the plans' --cuda-graphs replays and the data faults.
#
#    `bash scripts/gpu-check.sh --gemm` runs only the GEMM/precision/overlap
#    part (RuntimeCudaTests' precision and overlap tests and the GEMM bench,
#    ~1 min).
set -uo pipefail
cd "$(dirname "$0")/.."
D=.device
P=$D/plans
REPEAT=50

prepare() {
  set -e
  local lock=/tmp/autoshard-build.lock
  flock $lock ninja -C build-gpu autoshard-run RuntimeCudaTests KernelTests \
    autoshard-bench-gpu-gemm
  # Another change mid-edit may not build: the existing driver will do.
  flock $lock ninja -C build autoshard autoshard-translate ||
    echo "warning: build/ not rebuilt; using build/bin/autoshard as it is"
  ../shared/tools/device-bundle.sh $D build-gpu/bin/autoshard-run \
    build-gpu/unittests/Runtime/RuntimeCudaTests \
    build-gpu/bin/autoshard-bench-gpu-gemm
  strip -o $D/KernelTests build-gpu/unittests/Kernels/KernelTests
  xz -T2 -9 -f $D/KernelTests
  mkdir -p $P
  cp examples/gpt.mlir $P/gpt-example.mlir
  # Relative weight paths: the plans and weights move together.
  (cd $P && ../../build/bin/autoshard-translate --import-onnx \
     ../../test/Train/Inputs/gpt/model.onnx --weights-dir gpt-weights \
     -o gpt-fixture.mlir)
  local m
  for m in gpt-example gpt-fixture; do
    (cd $P &&
     ../../build/bin/autoshard compile $m.mlir --lower-only --backend cpu \
       --kernels=interpreted -o $m.cpu.asplan &&
     ../../build/bin/autoshard compile $m.mlir --lower-only --backend cuda \
       --kernels=interpreted -o $m.cuda-interpreted.asplan &&
     ../../build/bin/autoshard compile $m.mlir --lower-only --backend cuda \
       --kernels=compiled -o $m.cuda-compiled.asplan)
  done
  # The fixture's Adam training step (as bench/runtime/run.py builds it).
  (cd $P &&
   ../../build/bin/autoshard-opt gpt-fixture.mlir \
     "--dist-training-step=loss=cross_entropy optimizer=adam lr=0.01" \
     -o gpt-step.mlir &&
   for v in "cpu interpreted" "cuda interpreted" "cuda compiled"; do
     set -- $v
     ../../build/bin/autoshard compile gpt-step.mlir --lower-only \
       --entry train_step --backend $1 --kernels=$2 -o gpt-step.$1-$2.asplan
   done)
  # Precisions (issue 20): the fixture's forward and Adam step through the
  # pipeline on one device with --precision (--lower-only skips the pipeline,
  # and with it the mixed-precision pass).
  (cd $P &&
   for p in tf32 bf16 fp16; do
     ../../build/bin/autoshard compile gpt-fixture.mlir --mesh dp=1 \
       --precision $p --backend cuda --kernels=compiled \
       -o gpt-fixture.cuda-compiled.$p.asplan
   done &&
   ../../build/bin/autoshard compile gpt-fixture.mlir --mesh dp=1 \
     --backend cuda --kernels=compiled -o gpt-fixture.cuda-compiled.fp32.asplan &&
   for p in fp32 bf16; do
     ../../build/bin/autoshard compile gpt-step.mlir --mesh dp=1 \
       --entry train_step --precision $p --backend cuda --kernels=compiled \
       -o gpt-step.cuda-compiled.$p.asplan
   done)
  # The fixture's ids with one out of the vocabulary (deferred faults).
  /usr/bin/python3 -c "import numpy as np, sys; a = np.load(sys.argv[1]); \
a.flat[3] = 1000000; np.save(sys.argv[2], a)" test/Train/Inputs/gpt/ids.npy \
    $P/ids-oob.npy
  # A zero divisor in a loop nest (H1): stays interpreted under
  # --kernels=compiled, so the run ends in the located error.
  build/bin/autoshard compile test/Runtime/kernel-division.mlir --lower-only \
    --entry generic_zero --backend cuda --kernels=compiled \
    -o $P/div-zero.cuda-compiled.asplan
  /usr/bin/python3 -c "import numpy as np, sys; \
np.save(sys.argv[1], np.arange(-4, 4, dtype=np.int32)); \
np.save(sys.argv[2], np.array([1, 2, 0, 3, -1, 5, 0, 7], dtype=np.int32))" \
    $P/div-a.npy $P/div-b.npy
  # The programs of the cuda-gpu lit tests (they compile .mlir, which needs
  # MLIR; the device has none): plans here, compared there (lit_programs).
  mkdir -p $P/lit
  local f b
  for f in "test/Lower/gemm-epilogues.mlir main epi" \
           "test/Runtime/matmul-all-reduce.mlir reference mm" \
           "test/Runtime/all-to-all.mlir reference a2a" \
           "test/Runtime/memory-profile.mlir main mem"; do
    set -- $f
    for b in cuda cpu; do
      build/bin/autoshard compile $1 --lower-only --entry $2 --backend $b \
        --kernels=interpreted -o $P/lit/$3.$b.asplan
    done
  done
  AUTOSHARD_GEMM_EPILOGUES=0 build/bin/autoshard compile \
    test/Lower/gemm-epilogues.mlir --lower-only --backend cuda \
    --kernels=interpreted -o $P/lit/epi-plain.cuda.asplan
  du -sh $D/bundle.tgz $D/KernelTests.xz $P $D
  echo "ready: run(command=\"bash scripts/gpu-check.sh\", carry=[\"$D\"], timeout_s=420)"
}

if [ "${1:-}" = "--prepare" ]; then
  prepare
  exit
fi

# The training step: N Adam steps of the GPT fixture per plan, losses and
# per-step times, next to PyTorch eager's training loop on the GPU.
train() {
  local ids=$PWD/test/Train/Inputs/gpt/ids.npy
  local labels=$PWD/test/Train/Inputs/gpt/labels.npy
  local v backend
  for v in cpu-interpreted cuda-interpreted cuda-compiled; do
    backend=${v%%-*}
    echo "== gpt-fixture training step, $v (20 steps; step 1 includes the warm-up)"
    (cd $P && OPENBLAS_NUM_THREADS=1 timeout 120 bash ../run.sh autoshard-run \
       gpt-step.$v.asplan --backend $backend --steps 20 --input=ids=$ids \
       --input=labels=$labels --write-outputs=false 2>&1 |
       grep -E '^step (1|2|5|10|19|20)/|error' | sed 's/^/  /')
  done
  echo "== PyTorch eager training step on the GPU (20 steps)"
  (cd $P && timeout 120 python3 ../../bench/runtime/torch_gpu.py --fixture gpt \
     --weights-dir gpt-weights --steps 20) 2>&1 | tail -3
}

if [ "${1:-}" = "--train" ]; then
  train
  exit
fi

# GEMMs in every precision and the NCCL overlap: the unit tests, then the
# backend's and a program's GEMMs next to cuBLASLt (targets: backend/cuBLASLt
# >= 0.97, program/cuBLASLt >= 0.95).
gemm() {
  echo "== RuntimeCudaTests: precisions, bf16/f16 kernels, overlap"
  timeout 120 bash $D/run.sh RuntimeCudaTests \
    --gtest_filter='*/cuda:NcclSingleRank*' 2>&1 |
    grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure|error' | tail -20
  echo "== autoshard-bench-gpu-gemm (TFLOP/s)"
  timeout 240 bash $D/run.sh autoshard-bench-gpu-gemm --iters 20
}

# The fixture in each precision on the GPU (generated kernels, cuBLASLt GEMMs)
# next to PyTorch eager in the same precision (autocast for bf16/fp16): the
# forward's time and its output against the FP32 plan's, then 20 Adam steps
# in fp32 and bf16 (losses and per-step times).
precision() {
  local ids=$PWD/test/Train/Inputs/gpt/ids.npy
  local labels=$PWD/test/Train/Inputs/gpt/labels.npy
  local o=${OUT:-/tmp/gpu-check-out}/outputs/precision p t tt
  mkdir -p $o
  printf '%-6s %12s %12s %9s  %s\n' prec autoshard_ms torch_ms as/torch "output vs fp32 plan / vs torch same precision"
  for p in fp32 tf32 bf16 fp16; do
    (cd $P && timeout 60 bash ../run.sh autoshard-run gpt-fixture.cuda-compiled.$p.asplan \
       --backend cuda --input=ids=$ids --output-dir $o/$p >/dev/null 2>&1)
    t=$(cd $P && timeout 60 bash ../run.sh autoshard-run gpt-fixture.cuda-compiled.$p.asplan \
          --backend cuda --input=ids=$ids --repeat $REPEAT --output-dir /tmp/gpu-check-discard 2>&1 |
        sed -n 's/^step time: \([0-9.eE+-]*\) s.*/\1/p')
    tt=$(cd $P && timeout 120 python3 ../../bench/runtime/torch_gpu.py --fixture gpt \
           --weights-dir gpt-weights --repeat $REPEAT --precision $p \
           --output $o/torch-$p.npy 2>/dev/null |
         python3 -c "import json,sys; print('%.3f' % json.load(sys.stdin)['mean_ms'])" 2>/dev/null)
    local a b
    a=$(run autoshard-run --compare $o/$p/output_0.npy $o/fp32/output_0.npy --rtol 0 --atol 1 2>&1 | tail -1 | grep -o 'max_abs_err=[^ ]*')
    b=$(run autoshard-run --compare $o/$p/output_0.npy $o/torch-$p.npy --rtol 0 --atol 1 2>&1 | tail -1 | grep -o 'max_abs_err=[^ ]*')
    python3 - "$p" "${t:-nan}" "${tt:-nan}" "$a" "$b" <<'PY'
import sys
p, t, tt, a, b = sys.argv[1], float(sys.argv[2]) * 1e3, float(sys.argv[3]), sys.argv[4], sys.argv[5]
r = "%.2fx" % (t / tt) if t == t and tt == tt and tt > 0 else "-"
print("%-6s %12.3f %12.3f %9s  %s / %s" % (p, t, tt, r, a or "-", b or "-"))
PY
  done
  for p in fp32 bf16; do
    echo "== gpt-fixture Adam step, cuda compiled, $p (20 steps)"
    (cd $P && timeout 120 bash ../run.sh autoshard-run gpt-step.cuda-compiled.$p.asplan \
       --backend cuda --steps 20 --input=ids=$ids --input=labels=$labels \
       --write-outputs=false 2>&1 | grep -E '^step (1|2|10|19|20)/|error' | sed 's/^/  /')
    echo "== PyTorch eager Adam step, $p (20 steps)"
    (cd $P && timeout 120 python3 ../../bench/runtime/torch_gpu.py --fixture gpt \
       --weights-dir gpt-weights --steps 20 --precision $p 2>&1 |
     python3 -c "import json,sys; d=json.load(sys.stdin); print('  median %.3f ms; losses %s ... %s' % (d['median_ms'], d['losses'][:2], d['losses'][-1]))")
  done
}

if [ "${1:-}" = "--precision" ]; then
  OUT=${OUT:-/tmp/gpu-check-out}
  run() { bash $D/run.sh "$@"; }
  precision
  exit
fi

# A short check (~1.5 min) of the runtime's CUDA paths after a change:
# the unit tests, the generated kernels, the plans' CUDA-graph replays (with
# the reason when one is not recorded) and the data faults.
# The cuda-gpu lit tests' checks on their programs compiled by --prepare:
# test/Lower/gemm-epilogues-cuda.test (cuBLASLt epilogues = the CPU's and
# the unfused GEMMs'), test/Runtime/cuda/run-programs.test (CUDA = CPU) and
# test/Runtime/cuda/cuda-graphs.test (replays = plain runs exactly).
lit_programs() {
  local L=$P/lit o=${OUT:-/tmp/gpu-check-out}/lit i n v b
  rm -rf $o && mkdir -p $o
  for v in epi.cuda epi-plain.cuda epi.cpu mm.cuda mm.cpu a2a.cuda a2a.cpu mem.cuda mem.cpu; do
    b=${v#*.}
    timeout 60 bash $D/run.sh autoshard-run $L/$v.asplan --backend $b \
      --output-dir $o/$v >/dev/null 2>&1 || echo "  $v: run failed"
  done
  echo "  epilogues in the cuda plan: $(bash $D/run.sh autoshard-run $L/epi.cuda.asplan \
    --backend cuda --print-plan --write-outputs=false 2>&1 | grep -c ' epilogue ') (10 in the same plan on the dev machine)"
  cmp() { # A B RTOL ATOL COUNT LABEL
    n=0
    for ((i = 0; i < $5; ++i)); do
      bash $D/run.sh autoshard-run --compare $o/$1/output_$i.npy $o/$2/output_$i.npy \
        --rtol $3 --atol $4 2>&1 | grep -q '^MATCH' && n=$((n + 1))
    done
    printf '  %-44s %d of %d MATCH\n' "$6" $n $5
  }
  cmp epi.cuda epi.cpu 1e-3 1e-4 13 "gemm epilogues: cuda vs cpu"
  cmp epi.cuda epi-plain.cuda 1e-3 1e-4 13 "gemm epilogues: fused vs unfused (cuda)"
  cmp mm.cuda mm.cpu 1e-5 0 1 "matmul reference: cuda vs cpu"
  cmp a2a.cuda a2a.cpu 1e-5 0 1 "all-to-all reference: cuda vs cpu"
  timeout 60 bash $D/run.sh autoshard-run $L/mem.cuda.asplan --backend cuda \
    --repeat 5 --cuda-graphs --memory-stats --output-dir $o/mem.graphs 2>&1 |
    grep -E '^cuda graphs|^memory' | sed 's/^/  /'
  cmp mem.graphs mem.cuda 0 0 3 "memory-profile: graphs vs plain (exact)"
  cmp mem.graphs mem.cpu 1e-5 1e-6 3 "memory-profile: graphs vs cpu"
}

quick() {
  local ids=$PWD/test/Train/Inputs/gpt/ids.npy m v
  echo "== RuntimeCudaTests"
  timeout 120 bash $D/run.sh RuntimeCudaTests 2>&1 |
    grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|^\[ reason|Failure|error' | tail -20
  echo "== KernelTests (cuda)"
  python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
    $D/KernelTests.xz /tmp/bundle/stage/bin/KernelTests && chmod +x /tmp/bundle/stage/bin/KernelTests
  timeout 180 bash $D/run.sh KernelTests --gtest_filter='*cuda*:*Libdevice*:*Division*' 2>&1 |
    grep -E '^\[  FAILED|^\[  PASSED|^\[  SKIPPED|Failure' | tail -20
  for m in gpt-example gpt-fixture; do
    local extra=()
    [ $m = gpt-fixture ] && extra=(--input=ids=$ids)
    for v in cuda-compiled cuda-interpreted; do
      echo "== $m: $v --cuda-graphs --repeat $REPEAT"
      (cd $P && timeout 120 bash ../run.sh autoshard-run $m.$v.asplan \
         --backend cuda "${extra[@]}" --repeat $REPEAT --cuda-graphs \
         --write-outputs=false 2>&1 | grep -E '^step time|^cuda graphs|error')
    done
  done
  echo "== gpt-fixture: an out-of-range id with --cuda-graphs (must end in the gather's error)"
  (cd $P && timeout 60 bash ../run.sh autoshard-run gpt-fixture.cuda-compiled.asplan \
     --backend cuda --input=ids=$PWD/ids-oob.npy --repeat 3 --cuda-graphs \
     --write-outputs=false 2>&1 | grep -E 'error|^cuda graphs' | head -3)
  echo "== the cuda-gpu lit tests' programs (compiled here; MLIR is not on the device)"
  lit_programs
  echo "== integer division by zero, cuda-compiled (must end in 'integer division by zero (at ...)', rc 1)"
  (cd $P && timeout 60 bash ../run.sh autoshard-run div-zero.cuda-compiled.asplan --backend cuda \
     --input=arg0=$PWD/div-a.npy --input=arg1=$PWD/div-b.npy --write-outputs=false 2>&1 | tail -3
   echo "  rc=${PIPESTATUS[0]}")
}

if [ "${1:-}" = "--quick" ]; then
  quick
  exit
fi

if [ "${1:-}" = "--gemm" ]; then
  gemm
  exit
fi

OUT=${OUT:-/tmp/gpu-check-out}
mkdir -p "$OUT/outputs"
LOG=$OUT/gpu-check.txt
exec > >(tee "$LOG") 2>&1
say() { printf '%s\n' "$*"; }
run() { bash $D/run.sh "$@"; }
start=$(date +%s)

say "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
# libdevice and ptxas for KernelTests (which lowers MLIR on the device).
for c in "${CUDA_HOME:-}" /usr/local/cuda "$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /x/x)")")"; do
  if [ -n "$c" ] && [ -f "$c/nvvm/libdevice/libdevice.10.bc" ]; then export CUDA_HOME=$c; break; fi
done
if [ -z "${CUDA_HOME:-}" ] || [ ! -f "$CUDA_HOME/nvvm/libdevice/libdevice.10.bc" ]; then
  lib=$(find / -xdev -name libdevice.10.bc 2>/dev/null | head -1)
  [ -n "$lib" ] && export CUDA_HOME=$(dirname "$(dirname "$(dirname "$lib")")")
fi
say "CUDA_HOME=${CUDA_HOME:-none}"

say "== RuntimeCudaTests"
timeout 120 bash $D/run.sh RuntimeCudaTests 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure|error' | tail -20
say "== ExecutorGraphTest (cuda): gather replays, a fault after a replay, fallback"
timeout 60 bash $D/run.sh RuntimeCudaTests --gtest_filter='*ExecutorGraph*/cuda' 2>&1 |
  grep -E '^\[       OK|^\[  FAILED|^\[  SKIPPED|Failure|error' | tail -8
say "== autoshard-bench-gpu-gemm (TFLOP/s; backend/cuBLASLt >= 0.97, program/cuBLASLt >= 0.95)"
timeout 240 bash $D/run.sh autoshard-bench-gpu-gemm --iters 20 2>&1 | tail -40
say "== KernelTests (generated CUDA kernels vs the CPU interpreter)"
# run.sh unpacks the bundle into /tmp/bundle/stage (done by the call above).
python3 -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
  $D/KernelTests.xz /tmp/bundle/stage/bin/KernelTests && chmod +x /tmp/bundle/stage/bin/KernelTests
timeout 180 bash $D/run.sh KernelTests --gtest_filter='*cuda*:*Libdevice*' 2>&1 \
  | grep -E '^\[       OK|^\[  FAILED|^\[  PASSED|^\[  SKIPPED|Failure|note:|ulps' | tail -40

declare -A MS
compare() { # A B RTOL ATOL LABEL
  local r
  r=$(run autoshard-run --compare "$1" "$2" --rtol "$3" --atol "$4" 2>&1 | tail -1)
  printf '  %-44s %s\n' "$5" "$r"
}
for m in gpt-example gpt-fixture; do
  say "== $m: outputs"
  extra=()
  [ $m = gpt-fixture ] && extra=(--input=ids=$PWD/test/Train/Inputs/gpt/ids.npy)
  for v in cpu cuda-interpreted cuda-compiled; do
    backend=cpu; [ $v != cpu ] && backend=cuda
    o=$OUT/outputs/$m.$v
    mkdir -p "$o"
    (cd $P && timeout 60 bash ../run.sh autoshard-run $m.$v.asplan --backend $backend \
       "${extra[@]}" --output-dir "$o" 2>&1 | tail -2 | sed "s/^/  [$v] /")
  done
  compare $OUT/outputs/$m.cuda-compiled/output_0.npy $OUT/outputs/$m.cuda-interpreted/output_0.npy 1e-5 1e-6 "cuda compiled vs cuda interpreted"
  compare $OUT/outputs/$m.cuda-compiled/output_0.npy $OUT/outputs/$m.cpu/output_0.npy 1e-4 1e-5 "cuda compiled vs cpu (interpreter)"
  if [ $m = gpt-fixture ]; then
    compare $OUT/outputs/$m.cuda-compiled/output_0.npy test/Train/Inputs/gpt/output.npy 1e-4 1e-5 "cuda compiled vs committed torch output"
    compare $OUT/outputs/$m.cpu/output_0.npy test/Train/Inputs/gpt/output.npy 1e-4 1e-5 "cpu vs committed torch output"
  fi
  say "== $m: --repeat $REPEAT step times"
  for v in cuda-interpreted cuda-compiled cpu; do
    backend=cpu; [ $v != cpu ] && backend=cuda
    t=$(cd $P && OPENBLAS_NUM_THREADS=1 timeout 120 bash ../run.sh autoshard-run $m.$v.asplan \
          --backend $backend "${extra[@]}" --repeat $REPEAT --output-dir /tmp/gpu-check-discard 2>&1 \
        | sed -n 's/^step time: \([0-9.eE+-]*\) s.*/\1/p')
    MS[$m.$v]=$(python3 -c "print('%.3f' % (float('${t:-nan}') * 1e3))" 2>/dev/null || echo nan)
  done
  # Issue 20: the same runs replayed as CUDA graphs where the program can be
  # recorded (a collective keeps it plain; a gather's bounds check no longer
  # does: its fault is raised when the run synchronises).
  for v in cuda-compiled cuda-interpreted; do
    say "== $m: $v --cuda-graphs --repeat $REPEAT"
    (cd $P && timeout 120 bash ../run.sh autoshard-run $m.$v.asplan \
       --backend cuda "${extra[@]}" --repeat $REPEAT --cuda-graphs \
       --output-dir $OUT/outputs/$m.$v.graphs 2>&1 | grep -E '^step time|^cuda graphs|error')
    compare $OUT/outputs/$m.$v.graphs/output_0.npy $OUT/outputs/$m.$v/output_0.npy 0 0 "cuda graphs vs $v (exact)"
  done
  if [ $m = gpt-fixture ]; then
    say "== $m: an out-of-range id with --cuda-graphs (must end in the gather's error)"
    (cd $P && timeout 60 bash ../run.sh autoshard-run $m.cuda-compiled.asplan \
       --backend cuda --input=ids=$PWD/ids-oob.npy --repeat 3 --cuda-graphs \
       --write-outputs=false 2>&1 | grep -E 'error|^cuda graphs|^step time' | head -3)
  fi
  if [ $m = gpt-fixture ]; then
    say "== $m: PyTorch eager on the GPU"
    (cd $P && timeout 120 python3 ../../bench/runtime/torch_gpu.py --fixture gpt --weights-dir gpt-weights \
       --repeat $REPEAT --output "$OUT/outputs/torch-gpu.npy") > "$OUT/torch-gpu.json" 2> "$OUT/torch-gpu.err"
    MS[$m.torch]=$(python3 -c "import json;print('%.3f' % json.load(open('$OUT/torch-gpu.json'))['mean_ms'])" 2>/dev/null || echo nan)
    [ "${MS[$m.torch]}" = nan ] && tail -3 "$OUT/torch-gpu.err"
    [ -f "$OUT/outputs/torch-gpu.npy" ] && compare $OUT/outputs/$m.cuda-compiled/output_0.npy \
      "$OUT/outputs/torch-gpu.npy" 1e-4 1e-5 "cuda compiled vs torch eager on the GPU"
  fi
done

say "== integer division by zero, cuda-compiled (must end in 'integer division by zero (at ...)', rc 1)"
(cd $P && timeout 60 bash ../run.sh autoshard-run div-zero.cuda-compiled.asplan --backend cuda \
   --input=arg0=$PWD/div-a.npy --input=arg1=$PWD/div-b.npy --write-outputs=false 2>&1 | tail -3
 echo "  rc=${PIPESTATUS[0]}")
say "== the cuda-gpu lit tests' programs (compiled here; MLIR is not on the device)"
lit_programs
say "== precisions: the fixture's forward and Adam step (fp32 / tf32 / bf16 / fp16) vs PyTorch eager"
precision
say "== gpt-fixture cuda-compiled: where the time goes (--profile, 20 runs)"
ids=$PWD/test/Train/Inputs/gpt/ids.npy
(cd $P && timeout 60 bash ../run.sh autoshard-run gpt-fixture.cuda-compiled.asplan --backend cuda \
   --input=ids=$ids --repeat 20 --profile --memory-stats \
   --output-dir /tmp/gpu-check-discard 2>&1 | head -30)
say "== step time (ms, mean of $REPEAT runs; cpu: 1 thread, interpreter)"
printf '%-12s %12s %12s %10s %12s %10s %12s\n' model cuda-interp cuda-compiled speedup torch-eager as/torch cpu
for m in gpt-example gpt-fixture; do
  python3 - "$m" "${MS[$m.cuda-interpreted]:-nan}" "${MS[$m.cuda-compiled]:-nan}" "${MS[$m.torch]:-nan}" "${MS[$m.cpu]:-nan}" <<'PY'
import sys
m, i, c, t, cpu = sys.argv[1], *map(float, sys.argv[2:])
r = lambda a, b: "%.2fx" % (a / b) if a == a and b == b and b > 0 else "-"
f = lambda v: "%.3f" % v if v == v else "-"
print("%-12s %12s %12s %10s %12s %10s %12s" % (m, f(i), f(c), r(i, c), f(t), r(c, t), f(cpu)))
PY
done
say "elapsed: $(( $(date +%s) - start )) s"
