#mesh = #dist.mesh<[dp = 2, mp = 4]>
#links = #dist.mesh<[node = 2, gpu = 2], bandwidth = [25.0, 300.0], latency = [10.0, 2.0], devices = [3, 2, 1, 0]>
#uneven = #dist.mesh<[x = 3]>

module attributes {dist.mesh = #mesh} {
func.func @annotate(%a: tensor<8x16xf32>, %b: tensor<4x4xf32>, %c: tensor<10x4xf32>) {
  %0 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], []]>
  %1 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[dp, mp], []]> priority 3
  %2 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[mp, dp], []]>
  %3 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[], [mp]] partial sum [dp]>
  %4 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[], []] partial max [dp, mp]>
  %5 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[], []] partial sum []>
  %6 = dist.annotate %b : tensor<4x4xf32> as #dist.layout<#links, [[gpu], [node]]>
  %7 = dist.annotate %c : tensor<10x4xf32> as #dist.layout<#uneven, [[x] sizes(2, 5, 3), []]>
  %8 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], []] partial product [mp]>
  %9 = dist.annotate %a : tensor<8x16xf32> as #dist.layout<#mesh, [[dp], []] partial min [mp]>
  return
}

func.func @reshard(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = dist.reshard %a : tensor<8x8xf32> from #dist.layout<#mesh, [[dp], [mp]]> to #dist.layout<#mesh, [[mp], [dp]]>
  %1 = dist.reshard %0 : tensor<8x8xf32> from #dist.layout<#mesh, [[], []] partial sum [mp]> to #dist.layout<#mesh, [[mp], []]>
  return %1 : tensor<8x8xf32>
}

func.func @strategies(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %e = tensor.empty() : tensor<8x32xf32>
  %0 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, splits = [[2, 1], [1, 4]]>}
      ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %1 = linalg.matmul {dist.priority = 2 : i64, dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]], [[mp], []], [[dp], []]], out = [[[dp], []] partial sum [mp]]>}
      ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %2 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, splits = [[8, 1], [1, 1]], out_splits = [[8, 1]]>}
      ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %3 = arith.negf %0 {dist.strategy = #dist.strategy<#mesh, splits = [[2, 4]]>} : tensor<8x32xf32>
  return %3 : tensor<8x32xf32>
}
}
