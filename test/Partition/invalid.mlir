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
  // expected-error @below {{cannot pass layout [[dp]] to [[], [dp]]: dim 0 of the expanded shape is split differently from what its collapsed dim 0 allows}}
  %0 = tensor.expand_shape %a [[0, 1]] output_shape [2, 4] {dist.strategy = #dist.strategy<#mesh, in = [[[dp]]], out = [[[], [dp]]]>}
      : tensor<8xf32> into tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
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
