// Issue 22: a rank that stops (--debug-hang-rank sleeps forever, like
// kill -STOP) ends the job at the --timeout deadline with one message that
// names the collective, its location and the ranks that did not arrive;
// ranks waiting elsewhere are named with the collective they wait in.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// Rank 2 stops before running: rank 0's all_reduce over [dp] (ranks 0, 2)
// misses it.
// RUN: not %mpirun -np 4 autoshard-run %s --debug-hang-rank 2 --timeout 2 --output-dir %t/o > %t/stop.log 2>&1
// RUN: FileCheck %s --check-prefix=STOP < %t/stop.log
// STOP: autoshard-run: error: rank 0: timed out (--timeout) in all_reduce #1 over mesh axes [dp]: rank 2 did not arrive (no answer: stopped, dead or busy outside collectives); arrived: rank 0 (at {{.*}}watchdog.mlir:[[# @LINE + 16]]:10 shard.all_reduce)
// Without a deadline the run is unchanged.
// RUN: %mpirun -np 4 autoshard-run %s --timeout 0 --output-dir %t/ok | FileCheck %s --check-prefix=OK
// OK: output 0 'result0': f32[8x4]
// A rank that fails outright is named by its own message.
// RUN: not %mpirun -np 4 autoshard-run %s --debug-fail-rank 3 --output-dir %t/f 2>&1 | FileCheck %s --check-prefix=FAIL
// FAIL: autoshard-run: error: rank 3: injected failure (--debug-fail-rank)

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
  shard.grid @mesh(shape = 2x2)
  func.func @main(
      %x: tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[mp], []]>,
                           dist.global_type = tensor<8x4xf32>})
      -> (tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[mp], []]>,
                           dist.global_type = tensor<8x4xf32>}) {
    %r = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4x4xf32> -> tensor<4x4xf32>
    return %r : tensor<4x4xf32>
  }
}
