#!/bin/sh
# Builds the libFuzzer targets (fuzz/, clang-22 with -fsanitize=fuzzer,address)
# in build-fuzz/ and runs each for SECONDS on a copy of the committed seed
# corpus (fuzz/corpus/TARGET). Crashes land in build-fuzz/crashes/TARGET/;
# each becomes a file in fuzz/corpus/TARGET and a regression test. It also
# builds each target's ASan replay binary there, which lit then uses to
# replay the committed corpus instrumented (test/Robustness/lit.local.cfg).
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]     (default: all, 60)
#
# FUZZ_FLAGS adds libFuzzer flags, e.g. FUZZ_FLAGS="-fork=1 -ignore_crashes=1"
# to go on past a crash and collect every distinct one in the time.
#
# Needs: apt-get install clang-22 libclang-rt-22-dev
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
target=${1:-all}
seconds=${2:-60}
build=$src/build-fuzz
all="npy strategy dialect propagate onnx"
[ "$target" = all ] && target=$all

# Every library is compiled with coverage, so the fuzzer sees into the
# importer and the passes (the first build of propagate/onnx compiles the
# project: long on a small machine; `nice` it if others share the cores).
if [ ! -f "$build/build.ninja" ]; then
  mkdir -p "$build"
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DAUTOSHARD_FUZZ=ON -DAUTOSHARD_ENABLE_CUDA=OFF \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address" > "$build/configure.log"
fi
for t in $target; do
  ninja -C "$build" "fuzz-$t" "autoshard-fuzz-replay-$t"
done
# The LLVM/MLIR headers poison BumpPtrAllocator memory under ASan that the
# (uninstrumented) Debian libraries then use: not our bugs.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0}
for t in $target; do
  corpus=$build/corpus/$t crashes=$build/crashes/$t
  mkdir -p "$corpus" "$crashes"
  cp "$src/fuzz/corpus/$t"/* "$corpus/"
  echo "== fuzz-$t for $seconds s"
  # -timeout: an input that takes over 10 s is a hang.
  "$build/bin/fuzz-$t" "$corpus" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=4096 -artifact_prefix="$crashes/" -print_final_stats=1 \
    ${FUZZ_FLAGS:-} 2> "$build/fuzz-$t.log" || echo "fuzz-$t: crash, see $crashes and $build/fuzz-$t.log"
  grep -E "^(#[0-9]+ *DONE|stat::number_of_executed_units|stat::peak_rss_mb)|cov:" \
    "$build/fuzz-$t.log" | tail -3
done
