// RUN: autoshard-opt --dist-test-sharding-rules -verify-diagnostics -split-input-file %s -o /dev/null

// User strategies are matched against the op's rule: the remark shows the
// factor assignment they imply; a strategy that does not fit is a located
// error naming the operand and the reason.

#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @fits(%a: tensor<8x64xf32>, %b: tensor<64x16xf32>, %c: tensor<8x16xf32>) {
  // Row-parallel matmul: the contraction dim on mp leaves a partial sum;
  // each device does 2*8*16*64 / 8 flops.
  // expected-remark@+2 {{rule: factors: d0=8 par, d1=16 par, d2=64 red(sum)}}
  // expected-remark@+1 {{strategy: d0->[dp], d2->[mp]; results: [[dp], []] partial sum[mp]; flops 2048}}
  %0 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]], [[mp], []]]>}
      ins(%a, %b : tensor<8x64xf32>, tensor<64x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  // MindSpore split tuples ((2, 1), (1, 4)): column-parallel.
  // expected-remark@+2 {{rule:}}
  // expected-remark@+1 {{strategy: d0->[dp], d1->[mp]; results: [[dp], [mp]]; flops 2048}}
  %1 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, splits = [[2, 1], [1, 4]]>}
      ins(%a, %b : tensor<8x64xf32>, tensor<64x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  // Results given and consistent, accumulator included.
  // expected-remark@+2 {{rule:}}
  // expected-remark@+1 {{strategy: d2->[dp, mp]; results: [[], []] partial sum[dp, mp]}}
  %2 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[], [dp, mp]], [[dp, mp], []], [[], []] partial sum [dp, mp]], out = [[[], []] partial sum [dp, mp]]>}
      ins(%a, %b : tensor<8x64xf32>, tensor<64x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @contraction_mismatch(%a: tensor<8x64xf32>, %b: tensor<64x16xf32>, %c: tensor<8x16xf32>) {
  // expected-remark@+2 {{rule:}}
  // expected-error@+1 {{dist.strategy does not fit the op's sharding rule: operand #1 splits reduction factor d2 (size 64) over ['mp'] but operand #0 does not}}
  %0 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []], [[mp], []]]>}
      ins(%a, %b : tensor<8x64xf32>, tensor<64x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @axes_disagree(%a: tensor<8x64xf32>, %b: tensor<64x16xf32>, %c: tensor<8x16xf32>) {
  // expected-remark@+2 {{rule:}}
  // expected-error@+1 {{operand #1 splits reduction factor d2 (size 64) over ['dp'] but operand #0 splits it over ['mp']}}
  %0 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[], [mp]], [[dp], []]]>}
      ins(%a, %b : tensor<8x64xf32>, tensor<64x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @softmax_dim(%x: tensor<8x16xf32>, %o: tensor<8x16xf32>) {
  // expected-remark@+2 {{rule:}}
  // expected-error@+1 {{operand #0 splits dim 1 over ['mp'] but that dim is the op's need-replication factor d1 (size 16), which must stay whole}}
  %0 = linalg.softmax {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]]]>}
      dimension(1) ins(%x : tensor<8x16xf32>) outs(%o : tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @missing_partial(%a: tensor<8x64xf32>, %b: tensor<64x16xf32>, %c: tensor<8x16xf32>) {
  // expected-remark@+2 {{rule:}}
  // expected-error@+1 {{result #0 has layout [[dp], []] but the split factors (d0->[dp], d2->[mp]) give it [[dp], []] partial sum[mp]}}
  %0 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]], [[mp], []]], out = [[[dp], []]]>}
      ins(%a, %b : tensor<8x64xf32>, tensor<64x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @partial_input(%x: tensor<8x16xf32>) {
  // expected-remark@+2 {{rule:}}
  // expected-error@+1 {{operand #0 is partial over ['mp'] but the op reads complete values}}
  %0 = math.exp %x {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []] partial sum [mp]]>} : tensor<8x16xf32>
  return
}

// -----

#mesh = #dist.mesh<[x = 2, y = 3]>
func.func @reshape_minor(%x: tensor<4x6xf32>) {
  // The merged dim's split lands on its major factor, which the source keeps
  // whole.
  // expected-remark@+2 {{rule:}}
  // expected-error@+1 {{result #0 splits parallel factor f0 (size 4) over ['y'] but operand #0 does not}}
  %0 = tensor.collapse_shape %x [[0, 1]] {dist.strategy = #dist.strategy<#mesh, in = [[[], []]], out = [[[y]]]>} : tensor<4x6xf32> into tensor<24xf32>
  return
}

// -----

#mesh = #dist.mesh<[x = 2, y = 3]>
func.func @reshape_major(%x: tensor<2x3x4xf32>) {
  // x then y on the merged dim: f0 has one row per device, so y may split f1.
  // expected-remark@+2 {{rule:}}
  // expected-remark@+1 {{strategy: f0->[x], f1->[y]; results: [[x, y], []]}}
  %0 = tensor.collapse_shape %x [[0, 1], [2]] {dist.strategy = #dist.strategy<#mesh, in = [[[x], [y], []]]>} : tensor<2x3x4xf32> into tensor<6x4xf32>
  return
}

// -----

#mesh = #dist.mesh<[x = 4, y = 2]>
func.func @expand_not_whole(%x: tensor<16xf32>) {
  // [16] -> [2, 8]: x = 4 overshoots the major factor 2.
  // expected-remark@+2 {{rule:}}
  // expected-error@+1 {{operand #0 splits dim 0 over ['x', 'y'], which does not fall on whole factors of the dim (parallel factor f0 (size 2) is its major part)}}
  %0 = tensor.expand_shape %x [[0, 1]] output_shape [2, 8] {dist.strategy = #dist.strategy<#mesh, in = [[[x, y]]]>} : tensor<16xf32> into tensor<2x8xf32>
  return
}

// -----

#mesh = #dist.mesh<[dp = 2, mp = 4]>
func.func @window_dim(%in: tensor<1x8x8x2xf32>, %f: tensor<3x3x2x4xf32>, %o: tensor<1x6x6x4xf32>) {
  // A convolution's input row is indexed by d1 + d4: it cannot be split.
  // expected-remark@+2 {{rule:}}
  // expected-error@+1 {{operand #0 splits dim 1 over ['dp'] but the op cannot split that dim (it holds no factor)}}
  %0 = linalg.conv_2d_nhwc_hwcf {dist.strategy = #dist.strategy<#mesh, in = [[[], [dp], [], []], [[], [], [], []]]>}
      ins(%in, %f : tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) outs(%o : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  return
}
