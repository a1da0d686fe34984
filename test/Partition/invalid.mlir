// Input --dist-partition cannot partition gets a located error, never a crash.
// RUN: autoshard-opt %s --dist-partition -split-input-file -verify-diagnostics

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
// expected-error @below {{argument #0 has no 'dist.layout' attribute; run --dist-propagate first}}
func.func @no_layout(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  return %a : tensor<4x4xf32>
}
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
// expected-error @below {{argument #0 has dynamic shape 'tensor<?x4xf32>', which --dist-partition cannot split}}
func.func @dynamic(%a: tensor<?x4xf32> {dist.layout = #dist.layout<#mesh, [[], []]>}) -> tensor<?x4xf32> {
  return %a : tensor<?x4xf32>
}
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @no_strategy(%a: tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>})
    -> (tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>}) {
  // expected-error @below {{has no dist.strategy; run --dist-propagate first}}
  %0 = math.tanh %a : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @missing_reshard(%a: tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>})
    -> (tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[], [mp]]>}) {
  // expected-error @below {{operand #0 has layout [[dp], []] but the op's dist.strategy expects [[], [mp]] (a dist.reshard is missing)}}
  %0 = math.tanh %a {dist.strategy = #dist.strategy<#mesh, in = [[[], [mp]]], out = [[[], [mp]]]>} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @wrong_result(%a: tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>})
    -> (tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[], []]>}) {
  // expected-error @below {{result #0 has layout [[dp], []] but the function returns it as [[], []] (a dist.reshard is missing)}}
  return %a : tensor<4x4xf32>
}
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @concat_split_dim(%a: tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>})
    -> (tensor<8x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>}) {
  // expected-error @below {{concatenates along dim 0, which is split by layout [[dp], []]; only unsplit dims may be concatenated}}
  %0 = tensor.concat dim(0) %a, %a {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []], [[dp], []]], out = [[[dp], []]]>}
      : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @minor_factor(%a: tensor<8xf32> {dist.layout = #dist.layout<#mesh, [[dp]]>})
    -> (tensor<2x4xf32> {dist.layout = #dist.layout<#mesh, [[], [dp]]>}) {
  // expected-error @below {{cannot pass layout [[dp]] to [[], [dp]]: dim 1 of the expanded shape is split but its more major dim 0 is not split into single elements, so the shards of collapsed dim 0 would not be contiguous}}
  %0 = tensor.expand_shape %a [[0, 1]] output_shape [2, 4] {dist.strategy = #dist.strategy<#mesh, in = [[[dp]]], out = [[[], [dp]]]>}
      : tensor<8xf32> into tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
}

// -----

// Heads-major merge with two heads per device: the batch split on dp would
// interleave with the heads, so [NH*B] has no contiguous shard.
#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @heads_not_single(%a: tensor<4x4x8xf32> {dist.layout = #dist.layout<#mesh, [[mp], [dp], []]>})
    -> (tensor<16x8xf32> {dist.layout = #dist.layout<#mesh, [[mp, dp], []]>}) {
  // expected-error @below {{cannot pass layout [[mp], [dp], []] to [[mp, dp], []]: dim 1 of the expanded shape is split but its more major dim 0 is not split into single elements, so the shards of collapsed dim 0 would not be contiguous}}
  %0 = tensor.collapse_shape %a [[0, 1], [2]] {dist.strategy = #dist.strategy<#mesh, in = [[[mp], [dp], []]], out = [[[mp, dp], []]]>}
      : tensor<4x4x8xf32> into tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
}

// -----

// The merged dim's axes must be the group's axes major dim first.
#mesh = #dist.mesh<[dp = 2, mp = 4]>
module attributes {dist.mesh = #mesh} {
func.func @axes_out_of_order(%a: tensor<16x8xf32> {dist.layout = #dist.layout<#mesh, [[dp, mp], []]>})
    -> (tensor<4x4x8xf32> {dist.layout = #dist.layout<#mesh, [[mp], [dp], []]>}) {
  // expected-error @below {{cannot pass layout [[dp, mp], []] to [[mp], [dp], []]: collapsed dim 0 is split differently from the concatenation (major dim first) of its expanded dims' splits}}
  %0 = tensor.expand_shape %a [[0, 1], [2]] output_shape [4, 4, 8] {dist.strategy = #dist.strategy<#mesh, in = [[[dp, mp], []]], out = [[[mp], [dp], []]]>}
      : tensor<16x8xf32> into tensor<4x4x8xf32>
  return %0 : tensor<4x4x8xf32>
}
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @unsupported(%a: tensor<4x4xf32> {dist.layout = #dist.layout<#mesh, [[dp], []]>})
    -> (tensor<4x4xi32> {dist.layout = #dist.layout<#mesh, [[dp], []]>}) {
  // expected-error @below {{'tensor.bitcast' with a split or partial layout is not supported by --dist-partition}}
  %0 = tensor.bitcast %a {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []]], out = [[[dp], []]]>} : tensor<4x4xf32> to tensor<4x4xi32>
  return %0 : tensor<4x4xi32>
}
}

// -----

#m1 = #dist.mesh<[dp = 2, mp = 2]>
#m2 = #dist.mesh<[x = 4]>
// expected-note @below {{first mesh seen here}}
module attributes {dist.mesh = #m1} {
// expected-error @below {{uses mesh #dist.mesh<[x = 4]> but the module is partitioned for mesh #dist.mesh<[dp = 2, mp = 2]>}}
func.func @two_meshes(%a: tensor<4x4xf32> {dist.layout = #dist.layout<#m2, [[x], []]>})
    -> (tensor<4x4xf32> {dist.layout = #dist.layout<#m2, [[x], []]>}) {
  return %a : tensor<4x4xf32>
}
}
