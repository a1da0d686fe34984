// RUN: autoshard-opt %s | FileCheck %s
// RUN: autoshard-opt %s | autoshard-opt | FileCheck %s
// RUN: autoshard-opt %s -mlir-print-op-generic | autoshard-opt | FileCheck %s

// CHECK-DAG: #[[MESH:mesh[0-9]*]] = #dist.mesh<[dp = 2, mp = 4]>
// CHECK-DAG: #[[LINKS:mesh[0-9]*]] = #dist.mesh<[node = 2, gpu = 2], bandwidth = [2.500000e+01, 3.000000e+02], latency = [1.000000e+01, 2.000000e+00], devices = [3, 2, 1, 0]>
// CHECK-DAG: #[[UNEVEN:mesh[0-9]*]] = #dist.mesh<[x = 3]>
#mesh = #dist.mesh<[dp = 2, mp = 4]>
#links = #dist.mesh<[node = 2, gpu = 2], bandwidth = [25.0, 300.0], latency = [10.0, 2.0], devices = [3, 2, 1, 0]>
#uneven = #dist.mesh<[x = 3]>

module attributes {dist.mesh = #mesh} {
// CHECK-LABEL: func.func @annotate
func.func @annotate(%a: tensor<8x16xf32>, %b: tensor<4x4xf32>, %c: tensor<10x4xf32>) {
  // CHECK: dist.annotate %{{.*}} : tensor<8x16xf32> as #dist.layout<#[[MESH]], {{\[\[}}dp], []]>{{$}}
  %0 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], []]>
  // CHECK: dist.annotate %{{.*}} as #dist.layout<#[[MESH]], {{\[\[}}dp, mp], []]> priority 3
  %1 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[dp, mp], []]> priority 3
  // CHECK: dist.annotate %{{.*}} as #dist.layout<#[[MESH]], {{\[\[}}mp, dp], []]>
  %2 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[mp, dp], []]>
  // CHECK: dist.annotate %{{.*}} as #dist.layout<#[[MESH]], {{\[\[}}], [mp]] partial sum [dp]>
  %3 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[], [mp]] partial sum [dp]>
  // CHECK: dist.annotate %{{.*}} as #dist.layout<#[[MESH]], {{\[\[}}], []] partial max [dp, mp]>
  %4 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[], []] partial max [dp, mp]>
  // An empty partial list is no partial at all.
  // CHECK: dist.annotate %{{.*}} as #dist.layout<#[[MESH]], {{\[\[}}], []]>{{$}}
  %5 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[], []] partial sum []>
  // CHECK: dist.annotate %{{.*}} as #dist.layout<#[[LINKS]], {{\[\[}}gpu], [node]]>
  %6 = dist.annotate %b : tensor<4x4xf32> as #dist.layout<#links, [[gpu], [node]]>
  // CHECK: dist.annotate %{{.*}} as #dist.layout<#[[UNEVEN]], {{\[\[}}x] sizes(2, 5, 3), []]>
  %7 = dist.annotate %c : tensor<10x4xf32> as #dist.layout<#uneven, [[x] sizes(2, 5, 3), []]>
  // Product reductions and min reductions print by name.
  // CHECK: partial product [mp]
  %8 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], []] partial product [mp]>
  // CHECK: partial min [mp]
  %9 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], []] partial min [mp]>
  return
}

// CHECK-LABEL: func.func @reshard
func.func @reshard(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // CHECK: dist.reshard %{{.*}} : tensor<8x8xf32> from #dist.layout<#[[MESH]], {{\[\[}}dp], [mp]]> to #dist.layout<#[[MESH]], {{\[\[}}mp], [dp]]>
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#mesh, [[dp], [mp]]> to #dist.layout<#mesh, [[mp], [dp]]>
  // CHECK: dist.reshard %{{.*}} from #dist.layout<#[[MESH]], {{\[\[}}], []] partial sum [mp]> to #dist.layout<#[[MESH]], {{\[\[}}mp], []]>
  %1 = dist.reshard %0 : tensor<8x8xf32> from #dist.layout<#mesh, [[], []] partial sum [mp]> to #dist.layout<#mesh, [[mp], []]>
  return %1 : tensor<8x8xf32>
}

// CHECK-LABEL: func.func @strategies
func.func @strategies(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %e = tensor.empty() : tensor<8x32xf32>
  // Split tuples normalise to named axes.
  // CHECK: linalg.matmul {dist.strategy = #dist.strategy<#[[MESH]], in = {{\[\[}}[dp], []], {{\[\[}}], [mp]]]>}
  %0 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, splits = [[2, 1], [1, 4]]>}
      ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  // Named form with results, partial result, and the init included.
  // CHECK: linalg.matmul {dist.priority = 2 : i64, dist.strategy = #dist.strategy<#[[MESH]], in = {{\[\[}}[dp], [mp]], {{\[\[}}mp], []], {{\[\[}}dp], []]], out = {{\[\[}}[dp], []] partial sum [mp]]>}
  %1 = linalg.matmul {dist.priority = 2 : i64, dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]], [[mp], []], [[dp], []]], out = [[[dp], []] partial sum [mp]]>}
      ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  // Sugar for results too; 8 = dp x mp on one dim.
  // CHECK: linalg.matmul {dist.strategy = #dist.strategy<#[[MESH]], in = {{\[\[}}[dp, mp], []], {{\[\[}}], []]], out = {{\[\[}}[dp, mp], []]]>}
  %2 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, splits = [[8, 1], [1, 1]], out_splits = [[8, 1]]>}
      ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  // Equal counts on a 2x2-shaped choice follow mesh order.
  // CHECK: #dist.strategy<#[[MESH]], in = {{\[\[}}[dp], [mp]]]>
  %3 = arith.negf %0 {dist.strategy = #dist.strategy<#mesh, splits = [[2, 4]]>} : tensor<8x32xf32>
  return %3 : tensor<8x32xf32>
}
}
