// Issue 22: autoshard-run refuses what would give a silently wrong answer or
// a hang: ranks that read different inputs, a nan --timeout, negative
// tolerances, a non-finite value compared with a tolerance; a huge timeout
// saturates instead of firing at once; --help lists only our options.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// Every rank must read the same global inputs (one check at start-up).
// RUN: not %mpirun -np 1 autoshard-run %s --seed 1 : -np 1 autoshard-run %s --seed 2 2>&1 | FileCheck %s --check-prefix=SEED
// SEED: autoshard-run: error: ranks disagree on input 'arg0': rank(s) 1 read other values than rank 0; start every rank with the same --seed, --input files and weight files
// RUN: %mpirun -np 2 autoshard-run %s --seed 3 --output-dir %t/same | FileCheck %s --check-prefix=SAME
// SAME: output 0 'result0': f32[8x6]
// RUN: %mpirun -np 2 autoshard-run %s --timeout inf --output-dir %t/inf | FileCheck %s --check-prefix=SAME
// RUN: %mpirun -np 2 autoshard-run %s --timeout 1e300 --output-dir %t/huge | FileCheck %s --check-prefix=SAME
// RUN: not autoshard-run %s --timeout nan 2>&1 | FileCheck %s --check-prefix=NAN
// NAN: autoshard-run: error: --timeout must be a number of seconds (0: never), got nan
// RUN: not autoshard-run --compare %t/same/output_0.npy %t/same/output_0.npy --rtol -1 2>&1 | FileCheck %s --check-prefix=NEGTOL
// RUN: not autoshard-run --compare %t/same/output_0.npy %t/same/output_0.npy --atol -1e-6 2>&1 | FileCheck %s --check-prefix=NEGTOL
// NEGTOL: autoshard-run: error: --rtol and --atol must be non-negative
// Non-finite values match only themselves (.npy files written by plain
// python, no numpy).
// RUN: %python %S/Inputs/write_f32_npy.py %t/inf.npy inf 2
// RUN: %python %S/Inputs/write_f32_npy.py %t/inf2.npy inf 2
// RUN: %python %S/Inputs/write_f32_npy.py %t/neginf.npy -inf 2
// RUN: %python %S/Inputs/write_f32_npy.py %t/nan.npy nan 2
// RUN: %python %S/Inputs/write_f32_npy.py %t/nan2.npy nan 2
// RUN: %python %S/Inputs/write_f32_npy.py %t/one.npy 1 2
// RUN: autoshard-run --compare %t/inf.npy %t/inf2.npy | FileCheck %s --check-prefix=MATCH
// RUN: autoshard-run --compare %t/nan.npy %t/nan2.npy | FileCheck %s --check-prefix=MATCH
// RUN: not autoshard-run --compare %t/inf.npy %t/neginf.npy --rtol 1 --atol 1
// RUN: not autoshard-run --compare %t/one.npy %t/inf.npy --rtol 1 --atol 1
// RUN: not autoshard-run --compare %t/inf.npy %t/one.npy --rtol 1 --atol 1
// RUN: not autoshard-run --compare %t/nan.npy %t/one.npy --rtol 1 --atol 1
// MATCH: MATCH f32[2]
// Only autoshard-run's own options in --help (LLVM's are hidden).
// RUN: autoshard-run --help | FileCheck %s --check-prefix=HELP
// HELP: autoshard-run options:
// HELP: --timeout=
// HELP-NOT: --x86
// HELP-NOT: --mlir-
// HELP-NOT: --debug-counter

#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
  shard.grid @mesh(shape = 2)
  func.func @main(
      %x: tensor<4x6xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>,
                           dist.global_type = tensor<8x6xf32>})
      -> (tensor<8x6xf32> {dist.layout = #dist.layout<#mesh, [[], []]>,
                           dist.global_type = tensor<8x6xf32>}) {
    %g = shard.all_gather %x on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x6xf32> -> tensor<8x6xf32>
    return %g : tensor<8x6xf32>
  }
}
