// The runtime's buffer pool and profiler (autoshard-run --memory-stats,
// --profile, --profile-json). Values freed after their last use go back to
// the CPU backend's pool, so every run or training step after the first
// takes all its buffers from the pool: no allocation from the system.
// RUN: rm -rf %t && mkdir -p %t

// A training step (SGD with momentum, train-steps.mlir's @reference) on one
// rank: the step's results replace its arguments, whose buffers serve the
// next step.
// RUN: autoshard-run %S/train-steps.mlir --entry reference --steps 3 --memory-stats --write-outputs=false | FileCheck %s --check-prefix=STEPS
// STEPS: step 3/3 loss
// STEPS-NEXT: memory: {{[1-9][0-9]*}} system allocations ({{[1-9][0-9]*}} bytes), {{[1-9][0-9]*}} pool hits, peak {{[1-9][0-9]*}} bytes in use; allocations after the first step: 0 (0 bytes)

// The same on 4 ranks (dp=2, mp=2; collectives included), a line per rank.
// RUN: %if mpi %{ %mpirun -np 4 autoshard-run %S/train-steps.mlir --steps 3 --memory-stats --write-outputs=false | FileCheck %s --check-prefix=RANKS %}
// RANKS: step 3/3 loss
// RANKS-NEXT: memory rank 0: {{.*}} pool hits, peak {{.*}}; allocations after the first step: 0 (0 bytes)
// RANKS-NEXT: memory rank 1: {{.*}}; allocations after the first step: 0 (0 bytes)
// RANKS-NEXT: memory rank 2: {{.*}}; allocations after the first step: 0 (0 bytes)
// RANKS-NEXT: memory rank 3: {{.*}}; allocations after the first step: 0 (0 bytes)

// --repeat: the runs after the first allocate nothing either. --profile
// prints time and calls per kernel kind over the 5 runs.
// RUN: autoshard-run %s --repeat 5 --memory-stats --profile --profile-json %t/profile.json --write-outputs=false | FileCheck %s --check-prefix=PROFILE
// PROFILE: step time: {{[0-9.]+}} s (5 runs)
// PROFILE-NEXT: memory: {{.*}}; allocations after the first run: 0 (0 bytes)
// PROFILE-NEXT: profile: 5 runs, {{[0-9.]+}} ms wall ({{[0-9.]+}} ms per run)
// PROFILE-NEXT: kind calls total ms calls/run ms/run share
// PROFILE-DAG: {{^}}matmul 5 {{[0-9.]+}} 1.0 {{[0-9.]+}} {{[0-9.]+}}%
// PROFILE-DAG: {{^}}batch_matmul 5 {{[0-9.]+}} 1.0
// PROFILE-DAG: {{^}}generic ({{interpreted|compiled}}) {{[1-9][0-9]*}} {{[0-9.]+}}
// PROFILE-DAG: {{^}}softmax 5 {{[0-9.]+}} 1.0
// PROFILE-DAG: {{^}}transpose 5 {{[0-9.]+}} 1.0
// PROFILE-DAG: {{^}}allocation {{[1-9][0-9]*}} {{[0-9.]+}}
// PROFILE: {{^}}all kinds {{[0-9.]+}} {{[0-9.]+}} 100.0%
// PROFILE-NEXT: profile -> {{.*}}profile.json

// The JSON has the same kinds and parses with plain python. Both fills are
// folded into their GEMMs (beta = 0), so no fill runs.
// RUN: %python -c "import json,sys; d=json.load(open(sys.argv[1])); k={e['kind']: e['calls'] for e in d['kinds']}; print(d['runs'], d['wall_ms'] > 0, k['matmul'], k['softmax'], k['transpose'], k['batch_matmul'], sum(v for n, v in k.items() if n.startswith('generic')) > 0, k.get('fill', 0))" %t/profile.json | FileCheck %s --check-prefix=JSON
// JSON: 5 True 5 5 5 5 True 0

// Without the flags nothing is printed.
// RUN: autoshard-run %s --write-outputs=false | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: memory
// QUIET-NOT: profile

// A bad --profile-json path is one error line.
// RUN: not autoshard-run %s --profile-json %t/no/such/dir/p.json --write-outputs=false 2>&1 | FileCheck %s --check-prefix=BADPATH
// BADPATH: autoshard-run: error: cannot write --profile-json '{{.*}}p.json'

#map = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<4x8xf32> {dist.name = "x"},
                %w: tensor<8x6xf32> {dist.name = "w"},
                %b: tensor<6xf32> {dist.name = "b"},
                %a3: tensor<2x4x8xf32> {dist.name = "a3"},
                %b3: tensor<2x8x3xf32> {dist.name = "b3"})
    -> (tensor<6x4xf32>, tensor<4x6xf32>, tensor<2x4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e46 = tensor.empty() : tensor<4x6xf32>
  %z46 = linalg.fill ins(%zero : f32) outs(%e46 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %xw = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x6xf32>) outs(%z46 : tensor<4x6xf32>) -> tensor<4x6xf32>
  // The init %xw is also an input and a result: it is copied (unless the
  // loader fuses this generic into the next).
  %y = linalg.generic {indexing_maps = [#map, #col, #map], iterator_types = ["parallel", "parallel"]}
      ins(%xw, %b : tensor<4x6xf32>, tensor<6xf32>) outs(%xw : tensor<4x6xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %s = arith.addf %v, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x6xf32>) outs(%e46 : tensor<4x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x6xf32>
  %sm = linalg.softmax dimension(1) ins(%r : tensor<4x6xf32>) outs(%e46 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %e64 = tensor.empty() : tensor<6x4xf32>
  %t = linalg.transpose ins(%sm : tensor<4x6xf32>) outs(%e64 : tensor<6x4xf32>) permutation = [1, 0]
  %e243 = tensor.empty() : tensor<2x4x3xf32>
  %z243 = linalg.fill ins(%zero : f32) outs(%e243 : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %bm = linalg.batch_matmul ins(%a3, %b3 : tensor<2x4x8xf32>, tensor<2x8x3xf32>) outs(%z243 : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  return %t, %xw, %bm : tensor<6x4xf32>, tensor<4x6xf32>, tensor<2x4x3xf32>
}
