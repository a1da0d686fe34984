// Bad options and bad constraints give one located error.
// RUN: not autoshard-opt --dist-propagate=solver=ilp %s 2>&1 | FileCheck %s --check-prefix=SOLVER
// RUN: not autoshard-opt --dist-propagate=mesh=dp=0 %s 2>&1 | FileCheck %s --check-prefix=MESH
// RUN: not autoshard-opt --dist-propagate="mesh=dp=2 cluster=%t.missing.json" %s 2>&1 | FileCheck %s --check-prefix=CLUSTER
// RUN: not autoshard-opt --dist-propagate %s 2>&1 | FileCheck %s --check-prefix=NOMESH
// SOLVER: error: dist-propagate: unknown solver 'ilp' (expected 'dp', 'local' or 'exact')
// MESH: error: dist-propagate: cannot parse mesh option 'dp=0'
// CLUSTER: error: dist-propagate: {{.*}}missing.json
// NOMESH: error: dist-propagate: no mesh
func.func @f(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  return %a : tensor<8x16xf32>
}
