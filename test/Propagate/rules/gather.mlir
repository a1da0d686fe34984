// RUN: autoshard-opt --dist-test-sharding-rules --mlir-print-op-on-diagnostic=false %s -o /dev/null 2>&1 | FileCheck %s

// Embedding lookup: the table may be split on its vocabulary (gathered) dim;
// each device returns the rows it holds and zeros elsewhere, so the result
// is a partial sum over the split axes (Megatron's vocabulary-parallel
// embedding). The index dims are parallel; the coordinate dim is not.
#mesh = #dist.mesh<[dp = 2, mp = 4]>
module attributes {dist.mesh = #mesh} {
func.func @embedding(%table: tensor<1000x64xf32>, %ids: tensor<4x8x1xindex>) -> tensor<4x8x64xf32> {
  // CHECK: [[@LINE+2]]:8: remark: rule: factors: f0=4 par, f1=8 par, f2=1000 red(sum), f3=64 par; operands: [f2][f3], [f0][f1][]; results: [f0][f1][][f3]
  // CHECK: [[@LINE+1]]:8: remark: strategy: f0->[dp], f2->[mp]; results: {{\[}}[dp], [], [], []] partial sum[mp]
  %0 = tensor.gather %table[%ids] gather_dims([0]) {dist.strategy = #dist.strategy<#mesh, in = [[[mp], []], [[dp], [], []]]>}
      : (tensor<1000x64xf32>, tensor<4x8x1xindex>) -> tensor<4x8x1x64xf32>
  // Rank-reduced form: the gathered dim is dropped from the result.
  // CHECK: [[@LINE+1]]:8: remark: rule: factors: f0=4 par, f1=8 par, f2=1000 red(sum), f3=64 par; operands: [f2][f3], [f0][f1][]; results: [f0][f1][f3]
  %1 = tensor.gather %table[%ids] gather_dims([0]) unique : (tensor<1000x64xf32>, tensor<4x8x1xindex>) -> tensor<4x8x64xf32>
  return %1 : tensor<4x8x64xf32>
}
}
