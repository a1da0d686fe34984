// A tensor a linalg body reads with tensor.extract (a value defined above the
// op: a capture) is indexed with global indices, which partitioning leaves
// global, so it must be replicated where the op runs. Propagation makes it so
// (test/Propagate/captured-extract.mlir); a hand-written partitioned program
// that leaves it split is a located error. Before the check, the first case
// partitioned silently and 4 ranks read %table's local 4-element shard at
// global positions (output element 4 was -0.97 instead of -1.49).
// RUN: autoshard-opt %s --dist-partition -split-input-file -verify-diagnostics

#map = affine_map<(d0) -> (d0)>
#mesh = #dist.mesh<[x = 4]>
module attributes {dist.mesh = #mesh} {
func.func @split_capture(%table: tensor<16xf32> {dist.layout = #dist.layout<#mesh, [[x]]>},
                         %x: tensor<16xf32> {dist.layout = #dist.layout<#mesh, [[x]]>})
    -> (tensor<16xf32> {dist.layout = #dist.layout<#mesh, [[x]]>}) {
  %e = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[x]]]>} : tensor<16xf32>
  // expected-note @below {{captured by this op}}
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>)
      attrs = {dist.strategy = #dist.strategy<#mesh, in = [[[x]], [[x]]], out = [[[x]]]>} {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %c4 = arith.constant 4 : index
    %j = arith.divui %i, %c4 : index
    // expected-error @below {{operand #0 is a tensor captured from outside the region of 'linalg.generic' with layout [[x]]; a captured tensor must be replicated (a dist.reshard to [[]] is missing)}}
    %v = tensor.extract %table[%j] : tensor<16xf32>
    %s = arith.addf %in, %v : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}
}

// -----

// The op itself replicated, the 2-D capture split on its second dim over mp.
#map = affine_map<(d0) -> (d0)>
#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @replicated_op(%table: tensor<4x8xf32> {dist.layout = #dist.layout<#mesh, [[], [mp]]>},
                         %idx: tensor<6xindex> {dist.layout = #dist.layout<#mesh, [[]]>})
    -> (tensor<6xf32> {dist.layout = #dist.layout<#mesh, [[]]>}) {
  %e = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[]]]>} : tensor<6xf32>
  // expected-note @below {{captured by this op}}
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%idx : tensor<6xindex>) outs(%e : tensor<6xf32>)
      attrs = {dist.strategy = #dist.strategy<#mesh, in = [[[]], [[]]], out = [[[]]]>} {
  ^bb0(%k: index, %out: f32):
    %c1 = arith.constant 1 : index
    // expected-error @below {{operand #0 is a tensor captured from outside the region of 'linalg.generic' with layout [[], [mp]]; a captured tensor must be replicated (a dist.reshard to [[], []] is missing)}}
    %v = tensor.extract %table[%c1, %k] : tensor<4x8xf32>
    linalg.yield %v : f32
  } -> tensor<6xf32>
  return %r : tensor<6xf32>
}
}

// -----

// A pending sum is no more whole than a split: each rank holds one term.
#map = affine_map<(d0) -> (d0)>
#mesh = #dist.mesh<[x = 2]>
module attributes {dist.mesh = #mesh} {
func.func @partial_capture(%table: tensor<8xf32> {dist.layout = #dist.layout<#mesh, [[]] partial sum [x]>},
                           %idx: tensor<4xindex> {dist.layout = #dist.layout<#mesh, [[x]]>})
    -> (tensor<4xf32> {dist.layout = #dist.layout<#mesh, [[x]]>}) {
  %e = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[x]]]>} : tensor<4xf32>
  // expected-note @below {{captured by this op}}
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%idx : tensor<4xindex>) outs(%e : tensor<4xf32>)
      attrs = {dist.strategy = #dist.strategy<#mesh, in = [[[x]], [[x]]], out = [[[x]]]>} {
  ^bb0(%k: index, %out: f32):
    // expected-error @below {{operand #0 is a tensor captured from outside the region of 'linalg.generic' with layout [[]] partial sum[x]; a captured tensor must be replicated (a dist.reshard to [[]] is missing)}}
    %v = tensor.extract %table[%k] : tensor<8xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
}

// -----

// Resharded to replicated first (what propagation emits): partitions, the
// reshard becoming an all_gather (captured-gathered.mlir runs it).
#map = affine_map<(d0) -> (d0)>
#mesh = #dist.mesh<[x = 4]>
module attributes {dist.mesh = #mesh} {
func.func @gathered(%table: tensor<16xf32> {dist.layout = #dist.layout<#mesh, [[x]]>},
                    %x: tensor<16xf32> {dist.layout = #dist.layout<#mesh, [[x]]>})
    -> (tensor<16xf32> {dist.layout = #dist.layout<#mesh, [[x]]>}) {
  %whole = dist.reshard %table : tensor<16xf32> from #dist.layout<#mesh, [[x]]> to #dist.layout<#mesh, [[]]>
  %e = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[x]]]>} : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>)
      attrs = {dist.strategy = #dist.strategy<#mesh, in = [[[x]], [[x]]], out = [[[x]]]>} {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %c4 = arith.constant 4 : index
    %j = arith.divui %i, %c4 : index
    %v = tensor.extract %whole[%j] : tensor<16xf32>
    %s = arith.addf %in, %v : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}
}
